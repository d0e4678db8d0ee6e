!> Calls every public procedure of module scope_profiler in every form, with
!> the real module (fortran_stub_program_real) and with the stub
!> (fortran_stub_program): that both compile proves the stub has the same
!> interface for these calls; check_stub.py checks that the stub build links
!> no library, records nothing and writes no file.
program stub_program
   use scope_profiler
   use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
   implicit none
   integer :: stat
   integer(c_int) :: handle
   integer(c_int64_t) :: t0
   character(len=200) :: errmsg
   character(len=4096) :: path

   call get_command_argument(1, path)
   errmsg = ''
   call sp_setup(trim(path), label='stub test', stat=stat, errmsg=errmsg)
   if (stat /= SP_OK) error stop 'sp_setup'
   t0 = sp_now_ns()
   handle = sp_region('by_handle')
   call sp_begin(handle)
   call sp_region_begin('by_name')
   call sp_region_begin('inner', stat)
   call sp_region_end('inner', stat, errmsg)
   call sp_region_end('by_name')
   call sp_end(handle)
   if (sp_last_error() /= SP_OK) error stop 'sp_last_error'
   call sp_clear_error()
   if (len(sp_region_name(handle)) < 0) error stop 'sp_region_name'
   if (len(sp_error_string(SP_ERR_NESTING)) < 0) error stop 'sp_error_string'
   if (len(sp_status_name(SP_OK)) < 0) error stop 'sp_status_name'
   if (sp_is_active()) print '(a)', 'active'
   if (sp_now_ns() < t0) error stop 'sp_now_ns'
   if (.false.) call sp_setup_mpi(0, 'never.h5', 'never', stat, errmsg)
   call sp_finalize(stat, errmsg)
   if (stat /= SP_OK) error stop 'sp_finalize'
   print '(a)', 'stub_program done'
end program stub_program
