! caliper_app.F90 - a Caliper-annotated Fortran program, written against
! Caliper's Fortran API only (`use caliper_mod`, and `use mpi` when
! SP_TEST_MPI), built unchanged against libscopeprofiler_caliper: a
! ConfigManager (accepted and ignored, one message) and regions, one name
! held in a blank-padded variable. check_shims.py checks the file.
program caliper_app
#ifdef SP_TEST_MPI
   use mpi
#endif
   use caliper_mod
   implicit none
   type(ConfigManager) :: mgr
   character(len=:), allocatable :: errmsg
   character(len=16) :: solve_name = 'solve'
   integer :: rank, i, ierr

   rank = 0
   ierr = 0
#ifdef SP_TEST_MPI
   call mpi_init(ierr)
   call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
#endif
   mgr = ConfigManager_new()
   call mgr%add('runtime-report')
   if (mgr%error()) then
      errmsg = mgr%error_msg()
      write (*, '(2a)') 'caliper_app: ConfigManager: ', errmsg
      stop 1
   end if
   call mgr%start()

   call cali_begin_region('main')
   call cali_begin_region('setup')
   call cali_end_region('setup')
   do i = 1, 3
      call cali_begin_region(solve_name)
      call cali_end_region(solve_name)
   end do
   do i = 0, rank
      call cali_begin_region('rank_work')
      call cali_end_region('rank_work')
   end do
   call cali_end_region('main')

   call mgr%flush()
   call mgr%delete()
#ifdef SP_TEST_MPI
   call mpi_finalize(ierr)
#endif
end program caliper_app
