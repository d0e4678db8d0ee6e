! gptl_app.F90 - a GPTL-annotated Fortran program, written against GPTL's
! Fortran API only (`use gptl`, and `use mpi` when SP_TEST_MPI), built
! unchanged against libscopeprofiler_gptl. The same plan as gptl_app.c,
! with one name held in a blank-padded variable (Fortran's way): the
! region must still be "physics". check_shims.py checks the file.
program gptl_app
#ifdef SP_TEST_MPI
   use mpi
#endif
   use gptl
   implicit none
   integer :: rank, step, i, ierr, failures
   integer :: dynamics = 0
   character(len=16) :: physics_name = 'physics'

   failures = 0
   rank = 0
   ierr = 0
#ifdef SP_TEST_MPI
   call mpi_init(ierr)
   call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
#endif
   call expect(gptlsetoption(gptloverhead, 0), 'gptlsetoption')
   call expect(gptlinitialize(), 'gptlinitialize')
   call expect(gptlstart('total'), 'gptlstart total')
   do step = 1, 3
      call expect(gptlstart('step'), 'gptlstart step')
      call expect(gptlstart(physics_name), 'gptlstart physics')
      call expect(gptlstop(physics_name), 'gptlstop physics')
      call expect(gptlstart_handle('dynamics', dynamics), 'gptlstart_handle')
      call expect(gptlstop_handle('dynamics', dynamics), 'gptlstop_handle')
      call expect(gptlstop('step'), 'gptlstop step')
   end do
   do i = 0, rank
      call expect(gptlstart('rank_work'), 'gptlstart rank_work')
      call expect(gptlstop('rank_work'), 'gptlstop rank_work')
   end do
   call naps()
   call expect(gptlstop('total'), 'gptlstop total')
   call expect(gptlpr(rank), 'gptlpr')
   call expect(gptlfinalize(), 'gptlfinalize')
   if (gptlstop('total') /= -1) then
      write (*, '(a)') 'gptl_app: gptlstop after gptlfinalize did not return -1'
      failures = failures + 1
   end if
#ifdef SP_TEST_MPI
   call mpi_finalize(ierr)
#endif
   if (failures /= 0) then
      write (*, '(a,i0,a)') 'gptl_app: ', failures, ' unexpected return codes'
      stop 1
   end if

contains

   ! Running values in a time loop (as gptl_app.c's naps): 3 calls of
   ! 2, 4, 6 ms; inside the timer gptlquery says it is on and counts the
   ! finished calls; after them count 3 and at least 12 ms, printed for
   ! check_shims.py.
   subroutine naps()
      integer :: nap, count, onflg
      integer(8) :: papi(1)
      real(8) :: wall, usr, sys, wallclock
      do nap = 1, 3
         call expect(gptlstart('nap'), 'gptlstart nap')
         call expect(gptlquery('nap', -1, count, onflg, wall, usr, sys, papi(1), 0), &
                     'gptlquery inside nap')
         if (count /= nap - 1 .or. onflg /= 1) then
            write (*, '(a,i0,a,i0)') 'gptl_app: gptlquery inside nap gave count ', count, &
               ' onflg ', onflg
            failures = failures + 1
         end if
         call busy_ms(2*nap)
         call expect(gptlstop('nap'), 'gptlstop nap')
      end do
      call expect(gptlquery('nap', -1, count, onflg, wall, usr, sys, papi(1), 0), &
                  'gptlquery after the naps')
      call expect(gptlget_wallclock('nap', -1, wallclock), 'gptlget_wallclock')
      if (count /= 3 .or. onflg /= 0 .or. wall < 0.012d0 .or. abs(wallclock - wall) > 0d0) then
         write (*, '(a,i0,a,i0,a,f12.9,a,f12.9)') 'gptl_app: after the naps count ', count, &
            ' onflg ', onflg, ' wallclock ', wall, ' get_wallclock ', wallclock
         failures = failures + 1
      end if
      write (*, '(a,i0,a,i0,a,f15.9)') 'gptl_app: rank ', rank, ' nap count ', count, &
         ' wallclock ', wall
   end subroutine naps

   ! `ms` milliseconds of wall time, by the clock (no sleep in standard Fortran).
   subroutine busy_ms(ms)
      integer, intent(in) :: ms
      integer(8) :: start, now, rate
      call system_clock(start, rate)
      now = start
      do while (real(now - start, 8) < real(ms, 8)*1.0d-3*real(rate, 8))
         call system_clock(now)
      end do
   end subroutine busy_ms

   subroutine expect(rc, what)
      integer, intent(in) :: rc
      character(len=*), intent(in) :: what
      if (rc /= 0) then
         write (*, '(3a,i0)') 'gptl_app: ', what, ' returned ', rc
         failures = failures + 1
      end if
   end subroutine expect
end program gptl_app
