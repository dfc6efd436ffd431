! A 3-D heat equation in a box, its own loop, on the host, published to cuview viewers with the
! Fortran module `cuview` (docs/sdk.md "Fortran"). Viewers steer alpha, reset it, draw heat in.
!   fortran-heat --name heat3f [--size 64] [--steps N] [--hold]
!   (--steps: stop stepping after N steps; --hold: then keep serving until `cuview-ctl shutdown`)
program fortran_heat
  use, intrinsic :: iso_c_binding
  use cuview
  use heat_common
  implicit none
  type(cuview_publisher) :: pub
  real(c_float), allocatable, target :: T(:, :, :), Tn(:, :, :)
  character(len=64) :: name
  integer :: n, ierr, i
  integer(c_int64_t) :: step, limit, steps
  logical :: hold
  real(c_double) :: alpha

  call options(name, n, limit, hold)
  allocate (T(n, n, n), Tn(n, n, n))
  call initial(T, 0)
  call cuview_create(pub, trim(name), options='title="fortran heat"', status=ierr)
  call check(ierr, 'cuview_create')
  call cuview_add_field(pub, 'T', T, ierr, help='temperature')     ! T(i,j,k): the viewers' cell (i-1, j-1, k-1)
  call check(ierr, 'cuview_add_field')
  call cuview_add_param(pub, 'alpha', 0.1d0, 0d0, 1d0/6d0, ierr, help='diffusivity (stable up to 1/6)')
  call check(ierr, 'cuview_add_param')
  call cuview_add_input(pub, 'heat', ierr)
  call check(ierr, 'cuview_add_input')
  call cuview_start(pub, ierr)
  call check(ierr, 'cuview_start')
  step = 0
  do
    call cuview_poll(pub, ierr)
    call check(ierr, 'cuview_poll')
    if (cuview_shutdown_requested(pub)) exit
    call steer(pub, T, 0, alpha, step)
    steps = cuview_steps_allowed(pub, 4_c_int64_t)
    if (limit > 0) steps = min(steps, max(limit - step, 0_c_int64_t))
    if (limit > 0 .and. step >= limit .and. .not. hold) exit
    if (steps == 0) call cuview_wait(pub, 50, ierr)
    do i = 1, int(steps)
      call diffuse(T, Tn, real(alpha, c_float))
      step = step + 1
    end do
    call cuview_publish(pub, step, real(step, c_double), ierr)   ! never waits for a viewer
    call check(ierr, 'cuview_publish')
  end do
  call cuview_close(pub)
end program fortran_heat
