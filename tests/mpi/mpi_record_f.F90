!> mpi_record_f - the Fortran twin of mpi_record.c: the same recording plan
!> through the Fortran module, so check_mpi.py checks both languages.
!>
!>     mpi_record_f OUTPUT MODE     (MODE: regions | forget | comm)
!>
!> Built twice: with `use mpi` (an integer communicator) and, as
!> mpi_record_f08, with `use mpi_f08` (a type(MPI_Comm), through module
!> scope_profiler_mpi_f08).
program mpi_record_f
#ifdef SP_TEST_F08
   use mpi_f08
   use scope_profiler
   use scope_profiler_mpi_f08
#else
   use mpi
   use scope_profiler
#endif
   implicit none
   character(len=4096) :: path
   character(len=16) :: mode
   character(len=256) :: errmsg
   character(len=32) :: own
   integer :: rank, size, ierr, stat, i
#ifdef SP_TEST_F08
   type(MPI_Comm) :: comm
#else
   integer :: comm
#endif

   call get_command_argument(1, path)
   call get_command_argument(2, mode)
   call MPI_Init(ierr)
   call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
   call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
   comm = MPI_COMM_WORLD
   if (trim(mode) == 'comm') call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
   call sp_setup_mpi(comm, path, label='mpi-test', stat=stat, errmsg=errmsg)
   if (stat /= SP_OK) then
      write (*, '(a)') trim(errmsg)
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
   end if

   if (.not. (rank == 1 .and. size >= 3)) then  ! rank 1 records nothing
      do i = 0, rank
         call sp_region_begin('common')
         call sp_region_begin('inner')
         call sp_region_end('inner')
         call sp_region_end('common')
      end do
      write (own, '(a,i0)') 'rank.', rank
      do i = 0, rank
         call sp_region_begin(own)
         call sp_region_end(own)
      end do
      if (rank == 3) then
         call sp_region_begin('rank3.only')
         call sp_region_end('rank3.only')
      end if
   end if

   if (trim(mode) /= 'forget') then
      call sp_finalize(stat, errmsg)
      if (stat /= SP_OK) then
         write (*, '(a)') trim(errmsg)
         call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
   end if
   if (trim(mode) == 'comm') call MPI_Comm_free(comm, ierr)
   call MPI_Finalize(ierr)
end program mpi_record_f
