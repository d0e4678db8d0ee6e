!> heat2d - a 2D heat-equation mini-app (explicit Jacobi-type update) on a
!> Cartesian process grid, instrumented with scope_profiler the way a user
!> would instrument a production code: handles for the phases of every
!> step, names for the rarer phases. Its purpose is bench/miniapp/run.sh:
!> the cost of the default trace on the main loop of a real MPI code.
!>
!>     heat2d NX NY STEPS [RESIDUAL_EVERY [CHECKPOINT_EVERY [OUTPUT.h5]]]
!>
!> NX x NY is the global grid (split over the ranks by MPI_Dims_create),
!> STEPS the steps of the main loop. Every step posts the halo exchange
!> (MPI_Irecv/MPI_Isend with the 4 neighbours; the x-direction faces are
!> strided, sent with a vector datatype), updates the interior while the
!> messages travel, waits, then updates the block's boundary. Every
!> RESIDUAL_EVERY steps (default 10) the change of the step is reduced
!> with MPI_Allreduce; every CHECKPOINT_EVERY steps (default 100) a
!> checkpoint-like reduction (min, max, sum of the field to rank 0).
!>
!> Built with -DSP_PROFILE the program records (output: OUTPUT.h5, else
!> $SCOPE_PROFILER_FILE or the default); without it every profiler call is
!> removed by the preprocessor (the baseline). Region tree per rank:
!>
!>     solve > timestep > halo_post
!>                      > interior
!>                      > halo_wait
!>                      > boundary
!>                      > residual         (every RESIDUAL_EVERY steps)
!>                      > checkpoint       (every CHECKPOINT_EVERY steps)
!>
!> Rank 0 prints one line: the main loop's time (MPI_Wtime around the loop,
!> max over ranks), its CPU time (max over ranks), the run from MPI_Init's
!> end to sp_finalize's end, sp_finalize alone, and the last residual (the
!> same in every build: the profiler must not change the numbers).
program heat2d
   use, intrinsic :: iso_fortran_env, only: real64, int64, error_unit
   use mpi_f08
#ifdef SP_PROFILE
   use scope_profiler
#endif
   implicit none

#ifdef SP_PROFILE
#define PROF_BEGIN(h) call sp_begin(h)
#define PROF_END(h) call sp_end(h)
#define PROF_BEGIN_NAME(s) call sp_region_begin(s)
#define PROF_END_NAME(s) call sp_region_end(s)
#else
#define PROF_BEGIN(h)
#define PROF_END(h)
#define PROF_BEGIN_NAME(s)
#define PROF_END_NAME(s)
#endif

   real(real64), parameter :: alpha = 0.2_real64   ! diffusion number, < 0.25 for stability
   integer :: nx_global, ny_global, steps, residual_every, checkpoint_every
   integer :: nx, ny, x0, y0, step, cur, nxt, rank, nranks, i, j
   integer :: dims(2), coords(2), west, east, south, north
   logical :: periods(2)
   type(MPI_Comm) :: cart
   type(MPI_Datatype) :: x_face
   type(MPI_Request) :: requests(8)
   real(real64), allocatable :: u(:, :, :), source(:, :)
   real(real64) :: change, change_sum, residual, stats_local(3), stats_global(3)
   real(real64) :: t_run0, t_loop0, t_loop1, t_fin0, t_fin1, cpu0, cpu1
   real(real64) :: times(3), times_max(3)
   character(len=4096) :: output
#ifdef SP_PROFILE
   integer :: r_halo_post, r_interior, r_halo_wait, r_boundary, stat
   character(len=512) :: errmsg
#endif

   call MPI_Init()
   t_run0 = MPI_Wtime()
   call MPI_Comm_size(MPI_COMM_WORLD, nranks)
   call read_arguments()

#ifdef SP_PROFILE
   ! After MPI_Init, as the guide shows: collective, one file for the job.
   ! A blank path: $SCOPE_PROFILER_FILE or the default.
   call sp_setup(output, label='heat2d mini-app', stat=stat, errmsg=errmsg)
   if (stat /= SP_OK) write (error_unit, '(a)') trim(errmsg)//' (running unprofiled)'
   r_halo_post = sp_region('halo_post')
   r_interior = sp_region('interior')
   r_halo_wait = sp_region('halo_wait')
   r_boundary = sp_region('boundary')
#endif

   ! The process grid and this rank's block.
   dims = 0
   call MPI_Dims_create(nranks, 2, dims)
   periods = .false.
   call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart)
   call MPI_Comm_rank(cart, rank)
   call MPI_Cart_coords(cart, rank, 2, coords)
   call MPI_Cart_shift(cart, 0, 1, west, east)
   call MPI_Cart_shift(cart, 1, 1, south, north)
   call block_extent(nx_global, dims(1), coords(1), nx, x0)
   call block_extent(ny_global, dims(2), coords(2), ny, y0)
   if (nx < 1 .or. ny < 1) then
      if (rank == 0) write (error_unit, '(a)') 'heat2d: more ranks than grid points in one direction'
      call MPI_Abort(MPI_COMM_WORLD, 2)
   end if
   ! u(:, j, k) is contiguous: the y-direction faces are rows of nx values,
   ! the x-direction faces ny values nx + 2 apart.
   call MPI_Type_vector(ny, 1, nx + 2, MPI_DOUBLE_PRECISION, x_face)
   call MPI_Type_commit(x_face)

   allocate (u(0:nx + 1, 0:ny + 1, 2), source(nx, ny))
   u = 0
   do j = 1, ny
      do i = 1, nx
         source(i, j) = 1.0e-3_real64*sin(0.01_real64*real(x0 + i, real64)) &
                        *cos(0.013_real64*real(y0 + j, real64))
      end do
   end do

   cur = 1
   nxt = 2
   residual = 0
   call MPI_Barrier(cart)
   call cpu_time(cpu0)
   t_loop0 = MPI_Wtime()
   PROF_BEGIN_NAME('solve')
   do step = 1, steps
      PROF_BEGIN_NAME('timestep')

      PROF_BEGIN(r_halo_post)
      call MPI_Irecv(u(0, 1, cur), 1, x_face, west, 1, cart, requests(1))
      call MPI_Irecv(u(nx + 1, 1, cur), 1, x_face, east, 2, cart, requests(2))
      call MPI_Irecv(u(1, 0, cur), nx, MPI_DOUBLE_PRECISION, south, 3, cart, requests(3))
      call MPI_Irecv(u(1, ny + 1, cur), nx, MPI_DOUBLE_PRECISION, north, 4, cart, requests(4))
      call MPI_Isend(u(nx, 1, cur), 1, x_face, east, 1, cart, requests(5))
      call MPI_Isend(u(1, 1, cur), 1, x_face, west, 2, cart, requests(6))
      call MPI_Isend(u(1, ny, cur), nx, MPI_DOUBLE_PRECISION, north, 3, cart, requests(7))
      call MPI_Isend(u(1, 1, cur), nx, MPI_DOUBLE_PRECISION, south, 4, cart, requests(8))
      PROF_END(r_halo_post)

      ! The interior needs no halo value: it overlaps the messages.
      PROF_BEGIN(r_interior)
      call update(u(:, :, cur), u(:, :, nxt), 2, nx - 1, 2, ny - 1)
      PROF_END(r_interior)

      PROF_BEGIN(r_halo_wait)
      call MPI_Waitall(8, requests, MPI_STATUSES_IGNORE)
      PROF_END(r_halo_wait)

      PROF_BEGIN(r_boundary)
      call update(u(:, :, cur), u(:, :, nxt), 1, nx, 1, 1)
      if (ny > 1) call update(u(:, :, cur), u(:, :, nxt), 1, nx, ny, ny)
      if (ny > 2) then
         call update(u(:, :, cur), u(:, :, nxt), 1, 1, 2, ny - 1)
         if (nx > 1) call update(u(:, :, cur), u(:, :, nxt), nx, nx, 2, ny - 1)
      end if
      PROF_END(r_boundary)

      if (mod(step, residual_every) == 0) then
         PROF_BEGIN_NAME('residual')
         change = 0
         do j = 1, ny
            do i = 1, nx
               change = change + (u(i, j, nxt) - u(i, j, cur))**2
            end do
         end do
         call MPI_Allreduce(change, change_sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart)
         residual = sqrt(change_sum)
         PROF_END_NAME('residual')
      end if

      if (mod(step, checkpoint_every) == 0) then
         PROF_BEGIN_NAME('checkpoint')
         stats_local(1) = -minval(u(1:nx, 1:ny, nxt))
         stats_local(2) = maxval(u(1:nx, 1:ny, nxt))
         stats_local(3) = sum(u(1:nx, 1:ny, nxt))
         call MPI_Reduce(stats_local(1:2), stats_global(1:2), 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, cart)
         call MPI_Reduce(stats_local(3:3), stats_global(3:3), 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, cart)
         PROF_END_NAME('checkpoint')
      end if

      cur = 3 - cur
      nxt = 3 - nxt
      PROF_END_NAME('timestep')
   end do
   PROF_END_NAME('solve')
   t_loop1 = MPI_Wtime()
   call cpu_time(cpu1)

   change_sum = 0
   ! The field's checksum (sum over ranks), the same in every build.
   change = sum(u(1:nx, 1:ny, cur))
   call MPI_Reduce(change, change_sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, cart)
   call MPI_Type_free(x_face)
   deallocate (u, source)

   t_fin0 = MPI_Wtime()
#ifdef SP_PROFILE
   call sp_finalize(stat, errmsg)
   if (stat /= SP_OK .and. stat /= SP_ERR_NOT_ACTIVE) write (error_unit, '(a)') trim(errmsg)
#endif
   t_fin1 = MPI_Wtime()

   times = [t_loop1 - t_loop0, cpu1 - cpu0, t_fin1 - t_run0]
   call MPI_Reduce(times, times_max, 3, MPI_DOUBLE_PRECISION, MPI_MAX, 0, cart)
   if (rank == 0) then
      write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,es12.5,a,es12.5,a,es12.5,a,es12.5,a,es15.8,a,es22.15)') &
         'heat2d: ranks ', nranks, ' grid ', nx_global, 'x', ny_global, ' steps ', steps, &
         ' region_pairs_per_rank ', region_pairs(), &
         ' loop_s ', times_max(1), ' loop_cpu_s ', times_max(2), ' run_s ', times_max(3), &
         ' finalize_s ', t_fin1 - t_fin0, ' residual ', residual, ' checksum ', change_sum
   end if
   call MPI_Comm_free(cart)
   call MPI_Finalize()

contains

   !> One explicit step over the block's points [i0, i1] x [j0, j1].
   subroutine update(old, new, i0, i1, j0, j1)
      real(real64), intent(in) :: old(0:, 0:)
      real(real64), intent(inout) :: new(0:, 0:)
      integer, intent(in) :: i0, i1, j0, j1
      integer :: ii, jj
      do jj = j0, j1
         do ii = i0, i1
            new(ii, jj) = old(ii, jj) + alpha*(old(ii - 1, jj) + old(ii + 1, jj) &
                          + old(ii, jj - 1) + old(ii, jj + 1) - 4*old(ii, jj)) + source(ii, jj)
         end do
      end do
   end subroutine update

   !> The n points of a direction split over p blocks: block c's size and
   !> the global index before its first point.
   subroutine block_extent(n, p, c, size, offset)
      integer, intent(in) :: n, p, c
      integer, intent(out) :: size, offset
      size = n/p
      offset = c*size + min(c, mod(n, p))
      if (c < mod(n, p)) size = size + 1
   end subroutine block_extent

   !> The region pairs (begin + end) each rank records in the main loop:
   !> the program's own calls, not the PMPI wrappers' MPI regions.
   integer(int64) function region_pairs()
      region_pairs = 1 + 5*int(steps, int64) + steps/residual_every + steps/checkpoint_every
   end function region_pairs

   subroutine read_arguments()
      character(len=64) :: arg
      integer :: n, values(5), ios
      n = command_argument_count()
      values = [0, 0, 0, 10, 100]
      output = ''
      if (n < 3 .or. n > 6) call usage()
      do i = 1, min(n, 5)
         call get_command_argument(i, arg)
         read (arg, *, iostat=ios) values(i)
         if (ios /= 0 .or. values(i) < 1) call usage()
      end do
      if (n == 6) call get_command_argument(6, output)
      nx_global = values(1)
      ny_global = values(2)
      steps = values(3)
      residual_every = values(4)
      checkpoint_every = values(5)
   end subroutine read_arguments

   subroutine usage()
      write (error_unit, '(a)') 'usage: heat2d NX NY STEPS [RESIDUAL_EVERY [CHECKPOINT_EVERY [OUTPUT.h5]]]'// &
         ' (all >= 1)'
      call MPI_Abort(MPI_COMM_WORLD, 2)
   end subroutine usage
end program heat2d
