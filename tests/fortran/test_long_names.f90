!> Names of any length are recorded whole: the module passes the characters
!> and len_trim, never a fixed-size copy. check_profile.py long_names
!> compares the stored names with the ones built here.
program test_long_names
   use scope_profiler
   use sp_test_checks
   use, intrinsic :: iso_c_binding, only: c_int
   implicit none
   character(len=300) :: long_a, long_b
   character(len=5000) :: huge
   character(len=40) :: padded
   integer(c_int) :: handle
   integer :: i, stat

   do i = 1, 299
      long_a(i:i) = achar(iachar('a') + mod(i - 1, 26))
   end do
   long_a(300:300) = 'A'
   long_b = long_a(1:299)//'B'
   do i = 1, 5000
      huge(i:i) = achar(iachar('0') + mod(i - 1, 10))
   end do
   padded = 'padded'

   call sp_setup('long_names.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   call sp_region_begin(long_a)
   call sp_region_begin(long_b)          ! differs from long_a only at 300
   call sp_region_end(long_b, stat)
   call check_int(stat, SP_OK, 'end of long_b matched long_b, not long_a')
   call sp_region_end(long_a, stat)
   call check_int(stat, SP_OK, 'end of long_a')

   handle = sp_region(long_a)
   call check_int(len(sp_region_name(handle)), 300, 'length of the stored 300-character name')
   call check(sp_region_name(handle) == long_a, 'sp_region_name gives the whole name back')
   call sp_begin(handle)
   call sp_end(handle)
   call sp_region_begin(long_a(1:300))   ! a substring actual argument
   call sp_end(handle)

   call sp_region_begin(huge)
   call sp_region_end(huge)
   call sp_begin(sp_region(huge))
   call sp_end(sp_region(huge))
   call check_int(len(sp_region_name(sp_region(huge))), 5000, 'length of the 5000-character name')

   call sp_region_begin(padded)          ! trailing blanks are padding
   call sp_region_end('padded')
   call sp_region_begin('padded   ')
   call sp_region_end(padded)
   call sp_region_begin('  leading blanks kept')
   call sp_region_end('  leading blanks kept')

   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call test_finish('test_long_names')
end program test_long_names
