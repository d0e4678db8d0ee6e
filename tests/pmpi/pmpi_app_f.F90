! pmpi_app_f.F90 - the call plan of pmpi_app.c from Fortran, with NO
! profiler calls: `use mpi` (default), `use mpi_f08` (-DSP_TEST_F08) or
! `include 'mpif.h'` (-DSP_TEST_MPIFH).
! The checker expects the same regions, counts and bytes as for C, and
! the same "pmpi_app: rank <r> comms ..." line (the Fortran handles).
program pmpi_app_f
#if defined(SP_TEST_F08)
   use mpi_f08
#elif !defined(SP_TEST_MPIFH)
   use mpi
#endif
   implicit none
#ifdef SP_TEST_MPIFH
   include 'mpif.h'
#endif
#ifdef SP_TEST_F08
   type(MPI_Comm) :: world, half, copy, whole
   type(MPI_Request) :: req(6), none, nulls(2)
   type(MPI_Group) :: group
#else
   integer :: world, half, copy, whole
   integer :: req(6), none, nulls(2)
   integer :: group
#endif
   integer :: r, n, left, right, i, ierr, idx, outcount, indices(1)
   integer :: world_f, half_f, copy_f, whole_f
   integer :: bsend_buffer(1024)
   logical :: flag
   integer :: ints(400), ints2(400)
   double precision :: d(16), d2(16)
   character(len=16) :: text
   integer, allocatable :: counts(:), displs(:), ones(:), ones_displs(:), big(:)

   call MPI_Init(ierr)
   world = MPI_COMM_WORLD
   call MPI_Comm_rank(world, r, ierr)
   call MPI_Comm_size(world, n, ierr)
   left = mod(r + n - 1, n)
   right = mod(r + 1, n)
   ints = 0
   ints2 = 0
   d = 0
   d2 = 0
   text = 'fifteen chars..'
   allocate(counts(n), displs(n), ones(n), ones_displs(n), big(3 * n + n * (n + 1) / 2))
   big = 0
   do i = 1, n
      counts(i) = i
      displs(i) = (i - 1) * i / 2
      ones(i) = 1
      ones_displs(i) = i - 1
   end do

   do i = 1, 2
      call MPI_Barrier(world, ierr)
   end do
   do i = 1, 3
      call MPI_Bcast(ints, 10, MPI_INTEGER, 0, world, ierr)
   end do
   do i = 1, 5
      call MPI_Allreduce(d, d2, 1, MPI_DOUBLE_PRECISION, MPI_SUM, world, ierr)
   end do
   call MPI_Reduce(ints, ints2, 4, MPI_INTEGER, MPI_SUM, 0, world, ierr)
   do i = 1, 4
      call MPI_Irecv(ints2, 100, MPI_INTEGER, left, 7, world, req(1), ierr)
      call MPI_Isend(ints, 100, MPI_INTEGER, right, 7, world, req(2), ierr)
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
   end do
   do i = 1, 2
      call MPI_Sendrecv(d, 8, MPI_DOUBLE_PRECISION, right, 3, d2, 8, MPI_DOUBLE_PRECISION, &
                        left, 3, world, MPI_STATUS_IGNORE, ierr)
   end do
   if (n > 1 .and. r == 0) call MPI_Send(text, 16, MPI_CHARACTER, 1, 5, world, ierr)
   if (n > 1 .and. r == 1) call MPI_Recv(text, 16, MPI_CHARACTER, 0, 5, world, &
                                         MPI_STATUS_IGNORE, ierr)
   call MPI_Irecv(ints2, 1, MPI_INTEGER, right, 9, world, req(1), ierr)
   call MPI_Isend(ints, 1, MPI_INTEGER, left, 9, world, req(2), ierr)
   call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
   call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
   none = MPI_REQUEST_NULL
   call MPI_Test(none, flag, MPI_STATUS_IGNORE, ierr)

   call MPI_Gather(ints, 2, MPI_INTEGER, big, 2, MPI_INTEGER, 0, world, ierr)
   call MPI_Gatherv(ints, r + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, 0, world, ierr)
   call MPI_Scatter(big, 3, MPI_INTEGER, ints2, 3, MPI_INTEGER, 0, world, ierr)
   call MPI_Scatterv(big, counts, displs, MPI_INTEGER, ints2, r + 1, MPI_INTEGER, 0, world, ierr)
   call MPI_Allgather(ints, 2, MPI_INTEGER, big, 2, MPI_INTEGER, world, ierr)
   call MPI_Allgatherv(ints, r + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, world, ierr)
   call MPI_Alltoall(ints, 1, MPI_INTEGER, big, 1, MPI_INTEGER, world, ierr)
   call MPI_Alltoallv(ints, ones, ones_displs, MPI_INTEGER, big, ones, ones_displs, &
                      MPI_INTEGER, world, ierr)
   call MPI_Reduce_scatter(ints, ints2, ones, MPI_INTEGER, MPI_SUM, world, ierr)

   ! pmpi_app.c's plan_rest: receives posted before the matching sends.
   ! (The attached buffer is not detached: MPI_Buffer_detach's argument
   ! differs between the bindings, and every buffered send is received.)
   call MPI_Buffer_attach(bsend_buffer, 4096, ierr)
   call MPI_Irecv(ints2, 2, MPI_INTEGER, left, 11, world, req(1), ierr)
   call MPI_Irecv(ints2(3), 3, MPI_INTEGER, right, 12, world, req(2), ierr)
   call MPI_Ssend(ints, 2, MPI_INTEGER, right, 11, world, ierr)
   call MPI_Ssend(ints, 3, MPI_INTEGER, left, 12, world, ierr)
   do i = 1, 2
      call MPI_Waitany(2, req, idx, MPI_STATUS_IGNORE, ierr)
   end do
   call MPI_Irecv(ints2, 4, MPI_INTEGER, left, 13, world, req(1), ierr)
   call MPI_Bsend(ints, 4, MPI_INTEGER, right, 13, world, ierr)
   call MPI_Waitsome(1, req, outcount, indices, MPI_STATUSES_IGNORE, ierr)
   call MPI_Irecv(ints2, 5, MPI_INTEGER, left, 14, world, req(1), ierr)
   call MPI_Barrier(world, ierr)
   call MPI_Rsend(ints, 5, MPI_INTEGER, right, 14, world, ierr)
   call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
   call MPI_Irecv(ints2, 6, MPI_INTEGER, left, 15, world, req(1), ierr)
   call MPI_Irecv(ints2(7), 7, MPI_INTEGER, left, 16, world, req(2), ierr)
   call MPI_Irecv(ints2(14), 8, MPI_INTEGER, left, 17, world, req(3), ierr)
   call MPI_Barrier(world, ierr)
   call MPI_Issend(ints, 6, MPI_INTEGER, right, 15, world, req(4), ierr)
   call MPI_Ibsend(ints, 7, MPI_INTEGER, right, 16, world, req(5), ierr)
   call MPI_Irsend(ints, 8, MPI_INTEGER, right, 17, world, req(6), ierr)
   call MPI_Waitall(6, req, MPI_STATUSES_IGNORE, ierr)
   nulls(1) = MPI_REQUEST_NULL
   nulls(2) = MPI_REQUEST_NULL
   call MPI_Testall(2, nulls, flag, MPI_STATUSES_IGNORE, ierr)
   call MPI_Testany(2, nulls, idx, flag, MPI_STATUS_IGNORE, ierr)
   call MPI_Scan(ints, ints2, 2, MPI_INTEGER, MPI_SUM, world, ierr)
   call MPI_Exscan(ints, ints2, 3, MPI_INTEGER, MPI_SUM, world, ierr)

   call MPI_Comm_split(world, mod(r, 2), r, half, ierr)
   half_f = handle(half)
   do i = 1, 2
      call MPI_Allreduce(ints, ints2, 1, MPI_INTEGER, MPI_SUM, half, ierr)
   end do
   call MPI_Comm_free(half, ierr)
   call MPI_Comm_dup(world, copy, ierr)
   copy_f = handle(copy)
   call MPI_Barrier(copy, ierr)
   call MPI_Comm_free(copy, ierr)
   call MPI_Comm_group(world, group, ierr)
   call MPI_Comm_create(world, group, whole, ierr)
   whole_f = handle(whole)
   call MPI_Group_free(group, ierr)
   call MPI_Comm_free(whole, ierr)
   world_f = handle(world)
   write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'pmpi_app: rank ', r, ' comms world=', world_f, &
      ' half=', half_f, ' copy=', copy_f, ' whole=', whole_f
   flush (6)
   call MPI_Finalize(ierr)

contains

   ! The communicator's Fortran handle: the integer itself, or the f08
   ! type's only component.
   integer function handle(comm)
#ifdef SP_TEST_F08
      type(MPI_Comm), intent(in) :: comm
      handle = comm%MPI_VAL
#else
      integer, intent(in) :: comm
      handle = comm
#endif
   end function handle
end program pmpi_app_f
