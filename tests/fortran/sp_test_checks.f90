!> sp_test_checks - checks for the Fortran test programs. A failed check
!> prints what was checked with both values and the test goes on (so one run
!> shows every failure); test_finish exits 1 when any check failed.
module sp_test_checks
   use, intrinsic :: iso_fortran_env, only: error_unit
   implicit none
   private

   public :: check, check_int, check_text, test_finish

   integer :: failures = 0

contains

   subroutine check(condition, what)
      logical, intent(in) :: condition
      character(len=*), intent(in) :: what
      if (condition) return
      failures = failures + 1
      write (error_unit, '(a)') 'FAIL: '//what
   end subroutine check

   subroutine check_int(got, expected, what)
      integer, intent(in) :: got, expected
      character(len=*), intent(in) :: what
      if (got == expected) return
      failures = failures + 1
      write (error_unit, '(a,i0,a,i0)') 'FAIL: '//what//': got ', got, ', expected ', expected
   end subroutine check_int

   subroutine check_text(got, expected, what)
      character(len=*), intent(in) :: got, expected
      character(len=*), intent(in) :: what
      if (got == expected) return
      failures = failures + 1
      write (error_unit, '(a)') 'FAIL: '//what//': got "'//got//'", expected "'//expected//'"'
   end subroutine check_text

   !> End the test program: exit status 1 when a check failed.
   subroutine test_finish(name)
      character(len=*), intent(in) :: name
      if (failures > 0) then
         write (error_unit, '(a,i0,a)') name//': ', failures, ' check(s) failed'
         stop 1
      end if
      write (*, '(a)') name//': all in-program checks passed'
   end subroutine test_finish

end module sp_test_checks
