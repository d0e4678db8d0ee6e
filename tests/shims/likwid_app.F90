! likwid_app.F90 - a Fortran program with LIKWID markers, written against
! LIKWID's own module (`use likwid`; `use mpi` when SP_TEST_MPI), linked
! against libscopeprofiler_likwid_markers instead of -llikwid. One tag is
! held in a blank-padded variable: the region must still be "compute".
! check_shims.py checks the file.
program likwid_app
#ifdef SP_TEST_MPI
   use mpi
#endif
   use likwid
   implicit none
   integer :: rank, i, ierr
   character(len=16) :: compute_tag = 'compute'

   rank = 0
   ierr = 0
#ifdef SP_TEST_MPI
   call mpi_init(ierr)
   call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
#endif
   call likwid_markerInit()
   call likwid_markerThreadInit()
   call likwid_markerRegisterRegion(compute_tag)
   call likwid_markerStartRegion('total')
   do i = 1, 3
      call likwid_markerStartRegion(compute_tag)
      call likwid_markerStopRegion(compute_tag)
   end do
   do i = 0, rank
      call likwid_markerStartRegion('rank_work')
      call likwid_markerStopRegion('rank_work')
   end do
   call likwid_markerStopRegion('total')
   call likwid_markerClose()
#ifdef SP_TEST_MPI
   call mpi_finalize(ierr)
#endif
end program likwid_app
