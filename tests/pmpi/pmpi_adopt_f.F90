! pmpi_adopt_f: the Fortran form of pmpi_adopt.c's plain mode (issue 30:
! Fortran mini-apps call sp_setup('mine.h5') after MPI_Init): with the PMPI
! wrappers, which started a session at MPI_Init, the program's sp_setup
! takes it over; the file is mine.h5 with the barrier recorded before the
! setup, the region "solve" around two allreduces, a barrier after, and the
! program's label and language ("fortran").
program pmpi_adopt_f
   use mpi
   use scope_profiler
   implicit none
   integer :: ierr, rank, stat, i, failures
   double precision :: x, y

   failures = 0
   call MPI_Init(ierr)
   call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
   if (.not. sp_is_active()) failures = failures + 1
   call MPI_Barrier(MPI_COMM_WORLD, ierr)
   call sp_setup('mine.h5', label='adopted', stat=stat)
   if (stat /= SP_OK) then
      print '(a,i0,a,i0)', 'pmpi_adopt_f: rank ', rank, ': sp_setup stat ', stat
      failures = failures + 1
   end if
   call sp_region_begin('solve')
   x = 1d0
   do i = 1, 2
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
   end do
   call sp_region_end('solve')
   call MPI_Barrier(MPI_COMM_WORLD, ierr)
   call sp_finalize(stat=stat)
   if (stat /= SP_OK) failures = failures + 1
   if (failures == 0) print '(a,i0,a)', 'pmpi_adopt: rank ', rank, ' ok'
   call MPI_Finalize(ierr)
   if (failures /= 0) error stop 1
end program pmpi_adopt_f
