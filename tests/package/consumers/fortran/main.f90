! fortran_consumer: records regions through the installed Fortran module
! and writes the profile named by the first command-line argument.
program fortran_consumer
  use scope_profiler, only: sp_setup, sp_region_begin, sp_region_end, sp_finalize
  implicit none
  character(len=4096) :: path
  integer :: i, stat

  call get_command_argument(1, path)
  if (len_trim(path) == 0) error stop "usage: fortran_consumer <output.h5>"

  call sp_setup(trim(path), stat=stat)
  if (stat /= 0) error stop "sp_setup failed"
  call sp_region_begin("fortran_consumer_outer", stat=stat)
  if (stat /= 0) error stop "sp_region_begin failed"
  do i = 1, 2
    call sp_region_begin("fortran_consumer_inner")
    call sp_region_end("fortran_consumer_inner")
  end do
  call sp_region_end("fortran_consumer_outer", stat=stat)
  if (stat /= 0) error stop "sp_region_end failed"
  call sp_finalize(stat=stat)
  if (stat /= 0) error stop "sp_finalize failed"
end program fortran_consumer
