! inst_app.f90 - a Fortran program with no annotation, built with
! -finstrument-functions (tests/instrument): a module procedure with an
! internal procedure, and the main program's own internal procedures, one
! of them called while recording is paused (sp_pause, sp_resume).
module physics
  implicit none
  private
  public :: step
contains
  subroutine step(x)
    real, intent(inout) :: x
    x = x + helper(x)
  contains
    real function helper(y)
      real, intent(in) :: y
      helper = y * 0.5
    end function helper
  end subroutine step
end module physics

program inst_app
  use physics, only: step
  use scope_profiler, only: sp_pause, sp_resume, sp_is_paused
  implicit none
  real :: x = 1.0
  call step(x)
  call rescale()
  call sp_pause()
  call unrecorded()
  if (.not. sp_is_paused()) error stop 1
  call sp_resume()
  print *, x
contains
  subroutine rescale()
    x = x * 2
  end subroutine rescale

  subroutine unrecorded()
    x = x + 1
  end subroutine unrecorded
end program inst_app
