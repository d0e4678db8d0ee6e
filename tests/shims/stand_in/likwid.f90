! likwid.f90 (test stand-in) - module `likwid` as LIKWID installs it (the
! marker subroutines as external procedures with a character tag), for
! the Fortran test on machines whose LIKWID module is missing or was
! written by another compiler. Never installed.
module likwid
   implicit none
   interface
      subroutine likwid_markerInit()
      end subroutine likwid_markerInit
      subroutine likwid_markerThreadInit()
      end subroutine likwid_markerThreadInit
      subroutine likwid_markerNextGroup()
      end subroutine likwid_markerNextGroup
      subroutine likwid_markerClose()
      end subroutine likwid_markerClose
      subroutine likwid_markerRegisterRegion(regionTag)
         character(len=*), intent(in) :: regionTag
      end subroutine likwid_markerRegisterRegion
      subroutine likwid_markerStartRegion(regionTag)
         character(len=*), intent(in) :: regionTag
      end subroutine likwid_markerStartRegion
      subroutine likwid_markerStopRegion(regionTag)
         character(len=*), intent(in) :: regionTag
      end subroutine likwid_markerStopRegion
      subroutine likwid_markerResetRegion(regionTag)
         character(len=*), intent(in) :: regionTag
      end subroutine likwid_markerResetRegion
   end interface
end module likwid
