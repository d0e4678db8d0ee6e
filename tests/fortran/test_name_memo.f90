!> By-name calls through ONE character variable whose value changes (issue
!> 31: the by-name path remembers the last handle per name address, so a
!> new value at the same address, of the same length or not, must still
!> find its own region), in a trace and in aggregate mode. Pairs of names
!> differ in one byte at every place the compare looks at (first, middle,
!> last byte; names of 1 to 17 bytes), with stat in odd rounds and
!> without in even ones (the module's two paths), and an end whose variable now holds
!> another name is refused exactly as before (SP_ERR_UNMATCHED_END, the
!> open call untouched). check_profile.py name_memo counts every region's
!> calls in both files.
module name_memo_exercise
   use scope_profiler
   use sp_test_checks
   implicit none
   private
   public :: exercise, rounds

   integer, parameter :: rounds = 3
   integer, parameter :: pair_count = 11
   !> Each pair: two names the same variable takes in turn.
   character(len=17), parameter :: first(pair_count) = [character(len=17) :: &
      'x', 'ab', 'abc', 'abXdef', 'abcXefg', 'solve', 'abcdefgh1', 'kernel_a_x', &
      'sixteen_chars_aa', 'a_seventeen_chars', 'stem']
   character(len=17), parameter :: second(pair_count) = [character(len=17) :: &
      'y', 'ac', 'abd', 'abYdef', 'abcYefg', 'omega', 'abcdefgh2', 'kernel_b_x', &
      'sixteen_chars_ab', 'b_seventeen_chars', 'stem_longer']

   !> The one variable every call below passes (trailing blanks are padding).
   character(len=24), save :: name

contains

   subroutine exercise(file_path, mode)
      character(len=*), intent(in) :: file_path
      integer, intent(in) :: mode
      integer :: round, k, stat

      call sp_setup(file_path, mode=mode, stat=stat)
      call check_int(stat, SP_OK, 'sp_setup '//file_path)

      do round = 1, rounds
         do k = 1, pair_count
            name = first(k)
            call begin_end(trim(first(k)), mod(round, 2) == 1)
            name = second(k)
            call begin_end(trim(second(k)), mod(round, 2) == 1)
         end do
         ! nested, the variable changing under the open call
         name = 'outer'
         call sp_region_begin(name)
         name = 'inner'
         call sp_region_begin(name)
         call sp_region_end(name, stat)
         call check_int(stat, SP_OK, 'end of inner')
         name = 'outer'
         call sp_region_end(name, stat)
         call check_int(stat, SP_OK, 'end of outer')
      end do

      ! An end through the variable after it changed to another name of the
      ! same length: refused, and open_a stays open.
      name = 'open_a'
      call sp_region_begin(name)
      name = 'open_b'
      call sp_region_end(name, stat)
      call check_int(stat, SP_ERR_UNMATCHED_END, 'end of open_b while open_a is open')
      call check_int(int(sp_last_error()), int(SP_ERR_UNMATCHED_END), 'sp_last_error after it')
      call sp_clear_error()
      name = 'open_a'
      call sp_region_end(name, stat)
      call check_int(stat, SP_OK, 'open_a survived the refused end')

      call sp_finalize(stat)
      call check_int(stat, SP_OK, 'sp_finalize '//file_path)
   end subroutine exercise

   !> One call of the region the variable holds now, with stat (its own
   !> path through the module) or without (the common call's path; the
   !> file's counts tell whether it found the right region).
   subroutine begin_end(expected, with_stat)
      character(len=*), intent(in) :: expected
      logical, intent(in) :: with_stat
      integer :: stat
      if (.not. with_stat) then
         call sp_region_begin(name)
         call sp_region_end(name)
         return
      end if
      call sp_region_begin(name, stat)
      call check_int(stat, SP_OK, 'begin of '//expected)
      call sp_region_end(name, stat)
      call check_int(stat, SP_OK, 'end of '//expected)
   end subroutine begin_end

end module name_memo_exercise

program test_name_memo
   use scope_profiler
   use sp_test_checks
   use name_memo_exercise
   implicit none

   call exercise('name_memo_trace.h5', SP_MODE_TRACE)
   call exercise('name_memo_aggregate.h5', SP_MODE_AGGREGATE)
   call test_finish('test_name_memo')
end program test_name_memo
