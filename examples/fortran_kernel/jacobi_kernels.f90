!> jacobi_kernels - the numerical part of the fortran_kernel example: a
!> Jacobi sweep for the 2-D Poisson problem, its residual, and a recursive
!> coarse-grid smoother. Every routine is instrumented the way a real code
!> would be: handles resolved once for the hot loops, names elsewhere.
module jacobi_kernels
   use, intrinsic :: iso_fortran_env, only: real64
   use, intrinsic :: iso_c_binding, only: c_int
   use scope_profiler
   implicit none
   private

   public :: kernel_regions, jacobi_sweep, residual_norm, smooth_levels

   !> Region handles of the hot loops, resolved once by kernel_regions.
   integer(c_int) :: row_block = SP_INVALID_REGION

contains

   !> Resolve the handles used inside parallel loops. Handles may be
   !> resolved before sp_setup and stay valid for the whole run.
   subroutine kernel_regions()
      row_block = sp_region('row_block')
   end subroutine kernel_regions

   !> One Jacobi sweep u_new = (neighbours + h^2 f) / 4. The row loop runs
   !> in parallel and every block of rows is a call of "row_block" on the
   !> thread that computed it (a thread's calls are roots of that thread:
   !> the enclosing "stencil" call is open on the main thread only).
   subroutine jacobi_sweep(u, u_new, f, h)
      real(real64), intent(in) :: u(:, :), f(:, :)
      real(real64), intent(inout) :: u_new(:, :)
      real(real64), intent(in) :: h
      integer :: i, j, n, m, first, last
      integer, parameter :: block_rows = 16

      n = size(u, 1)
      m = size(u, 2)
      call sp_region_begin('stencil')
      !$omp parallel do default(none) shared(u, u_new, f, h, n, m, row_block) &
      !$omp private(i, j, last) schedule(static)
      do first = 2, m - 1, block_rows
         call sp_begin(row_block)
         last = min(first + block_rows - 1, m - 1)
         do j = first, last
            do i = 2, n - 1
               u_new(i, j) = 0.25_real64*(u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + &
                                          u(i, j + 1) + h*h*f(i, j))
            end do
         end do
         call sp_end(row_block)
      end do
      !$omp end parallel do
      call sp_region_end('stencil')
   end subroutine jacobi_sweep

   !> The max-norm of u - u_old (the convergence measure).
   real(real64) function residual_norm(u, u_old)
      real(real64), intent(in) :: u(:, :), u_old(:, :)
      call sp_region_begin('reduce')
      residual_norm = maxval(abs(u - u_old))
      call sp_region_end('reduce')
   end function residual_norm

   !> A V-cycle shape of recursion: smooth the grid, recurse on a grid of
   !> half the size, smooth again. Each level is one "smooth_level" call
   !> whose parent is the level above, so the file shows the recursion depth.
   recursive subroutine smooth_levels(u, depth)
      real(real64), intent(inout) :: u(:, :)
      integer, intent(in) :: depth
      real(real64), allocatable :: coarse(:, :)
      integer :: n, m

      call sp_region_begin('smooth_level')
      n = size(u, 1)
      m = size(u, 2)
      call damp(u)
      if (depth > 0 .and. n > 4 .and. m > 4) then
         coarse = u(1:n:2, 1:m:2)
         call smooth_levels(coarse, depth - 1)
         u(1:n:2, 1:m:2) = 0.5_real64*(u(1:n:2, 1:m:2) + coarse)
      end if
      call damp(u)
      call sp_region_end('smooth_level')
   end subroutine smooth_levels

   !> A weighted average of each interior point with its neighbours.
   subroutine damp(u)
      real(real64), intent(inout) :: u(:, :)
      integer :: n, m
      n = size(u, 1)
      m = size(u, 2)
      u(2:n - 1, 2:m - 1) = 0.5_real64*u(2:n - 1, 2:m - 1) + 0.125_real64* &
                            (u(1:n - 2, 2:m - 1) + u(3:n, 2:m - 1) + u(2:n - 1, 1:m - 2) + u(2:n - 1, 3:m))
   end subroutine damp

end module jacobi_kernels
