! pmpi_app_f.F90 - the call plan of pmpi_app.c from Fortran, with NO
! profiler calls: `use mpi` (default), `use mpi_f08` (-DSP_TEST_F08) or
! `include 'mpif.h'` (-DSP_TEST_MPIFH).
! The checker expects the same regions, counts and bytes as for C.
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
   type(MPI_Comm) :: world, half, copy
   type(MPI_Request) :: req(2), none
#else
   integer :: world, half, copy
   integer :: req(2), none
#endif
   integer :: r, n, left, right, i, ierr
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

   call MPI_Comm_split(world, mod(r, 2), r, half, ierr)
   do i = 1, 2
      call MPI_Allreduce(ints, ints2, 1, MPI_INTEGER, MPI_SUM, half, ierr)
   end do
   call MPI_Comm_free(half, ierr)
   call MPI_Comm_dup(world, copy, ierr)
   call MPI_Barrier(copy, ierr)
   call MPI_Comm_free(copy, ierr)
   call MPI_Finalize(ierr)
end program pmpi_app_f
