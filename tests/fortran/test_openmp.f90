!> Recording inside an OpenMP parallel loop, by handle and by name, from
!> every thread. check_profile.py openmp checks counts and per-thread parents.
program test_openmp
   use scope_profiler
   use sp_test_checks
   use omp_lib, only: omp_get_num_threads
   use, intrinsic :: iso_c_binding, only: c_int
   implicit none
   integer, parameter :: iterations = 1000
   integer(c_int) :: body
   integer :: i, stat, threads, errors
   real :: acc(iterations)

   call sp_setup('openmp.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   body = sp_region('body')
   threads = 0
   errors = 0
   call sp_region_begin('parallel_loop')
   !$omp parallel default(none) shared(body, acc, threads) private(stat) reduction(+:errors)
   !$omp single
   threads = omp_get_num_threads()
   !$omp end single
   !$omp do schedule(static)
   do i = 1, iterations
      call sp_begin(body)
      call sp_region_begin('body_inner', stat)
      if (stat /= SP_OK) errors = errors + 1
      acc(i) = sqrt(real(i))
      call sp_region_end('body_inner', stat)
      if (stat /= SP_OK) errors = errors + 1
      call sp_end(body)
   end do
   !$omp end do
   !$omp end parallel
   call sp_region_end('parallel_loop')
   call check_int(errors, 0, 'errors inside the parallel loop')
   call check(abs(acc(iterations) - sqrt(real(iterations))) < 1e-3, 'the loop ran')
   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   write (*, '(a,i0)') 'threads=', threads
   call test_finish('test_openmp')
end program test_openmp
