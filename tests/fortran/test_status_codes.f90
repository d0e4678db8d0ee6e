!> The module's status constants have the values of the C status table:
!> each constant's name is what sp_status_name() gives for its value, and
!> the module has one constant per code of the table.
program test_status_codes
   use scope_profiler
   use sp_test_checks
   implicit none
   integer :: codes

   call expect(SP_OK, 'SP_OK')
   call expect(SP_ERR_INVALID_ARGUMENT, 'SP_ERR_INVALID_ARGUMENT')
   call expect(SP_ERR_NOT_ACTIVE, 'SP_ERR_NOT_ACTIVE')
   call expect(SP_ERR_ALREADY_ACTIVE, 'SP_ERR_ALREADY_ACTIVE')
   call expect(SP_ERR_UNMATCHED_END, 'SP_ERR_UNMATCHED_END')
   call expect(SP_ERR_INVALID_REGION, 'SP_ERR_INVALID_REGION')
   call expect(SP_ERR_OUT_OF_MEMORY, 'SP_ERR_OUT_OF_MEMORY')
   call expect(SP_ERR_BUFFER_LIMIT, 'SP_ERR_BUFFER_LIMIT')
   call expect(SP_ERR_OUTPUT, 'SP_ERR_OUTPUT')
   call expect(SP_ERR_HDF5, 'SP_ERR_HDF5')
   call expect(SP_ERR_OPEN_AT_FINALIZE, 'SP_ERR_OPEN_AT_FINALIZE')
   call expect(SP_ERR_FILE_NOT_FOUND, 'SP_ERR_FILE_NOT_FOUND')
   call expect(SP_ERR_NOT_A_PROFILE, 'SP_ERR_NOT_A_PROFILE')
   call expect(SP_ERR_SCHEMA_UNSUPPORTED, 'SP_ERR_SCHEMA_UNSUPPORTED')
   call expect(SP_ERR_CORRUPT, 'SP_ERR_CORRUPT')
   call expect(SP_ERR_NESTING, 'SP_ERR_NESTING')
   call expect(SP_ERR_NO_SUMMARY, 'SP_ERR_NO_SUMMARY')
   call expect(SP_ERR_REGION_COLLISION, 'SP_ERR_REGION_COLLISION')
   call expect(SP_ERR_MPI, 'SP_ERR_MPI')
   call expect(SP_ERR_UNSUPPORTED, 'SP_ERR_UNSUPPORTED')
   call expect(SP_ERR_REGION_LIMIT, 'SP_ERR_REGION_LIMIT')

   ! A code appended to the C table without a constant here fails this.
   codes = 0
   do while (sp_status_name(codes) /= 'SP_UNKNOWN' .and. codes < 1000)
      codes = codes + 1
   end do
   call check_int(codes, 21, 'codes in the C status table (constants in the module)')
   call check_text(sp_status_name(-3), 'SP_UNKNOWN', 'sp_status_name outside the table')
   call check_text(sp_error_string(SP_OK), 'success', 'sp_error_string(SP_OK)')
   call check_text(sp_error_string(-3), 'unknown status', 'sp_error_string outside the table')
   call check_int(int(SP_INVALID_REGION), -1, 'SP_INVALID_REGION')
   call check_int(int(sp_region('')), int(SP_INVALID_REGION), 'sp_region('''') is SP_INVALID_REGION')
   call test_finish('test_status_codes')

contains

   subroutine expect(code, name)
      integer, intent(in) :: code
      character(len=*), intent(in) :: name
      call check_text(sp_status_name(code), name, 'sp_status_name of the constant '//name)
   end subroutine expect
end program test_status_codes
