! A 3-D heat equation in a box, its own loop, on the host, in real(8) with a layer of ghost cells,
! published to cuview viewers with the Fortran module `cuview` (docs/sdk.md "Fortran"): the interior
! in place, on a grid in mm (cells of 1 x 1 x 2 mm; heat_common.f90). Viewers steer alpha, reset
! it, draw heat in.
!   fortran-heat --name heat3f [--size 64] [--steps N] [--hold]
!   (--size n: n x n x n/2 cells; --steps: stop stepping after N steps; --hold: then keep serving
!   until `cuview-ctl shutdown`)
program fortran_heat
  use, intrinsic :: iso_c_binding
  use cuview
  use heat_common
  implicit none
  type(cuview_publisher) :: pub
  real(c_double), allocatable, target :: T(:, :, :)  ! target: the publisher reads it in place
  real(c_double), allocatable :: Tn(:, :, :)
  character(len=64) :: name
  integer :: n, nz, ierr, i
  integer(c_int64_t) :: step, limit, steps
  logical :: hold
  real(c_double) :: alpha

  call options(name, n, limit, hold)
  nz = n/2
  allocate (T(0:n + 1, 0:n + 1, 0:nz + 1), Tn(n, n, nz))  ! the ghost cells stay 0: cold walls
  call initial(T, 0)
  call cuview_create(pub, trim(name), options='title="fortran heat"', status=ierr)
  call check(ierr, 'cuview_create')
  call cuview_add_grid(pub, 'box', [n, n, nz], ierr, origin=[dx/2, dy/2, dz/2], spacing=[dx, dy, dz], units='mm')
  call check(ierr, 'cuview_add_grid')
  call cuview_add_field(pub, 'T', T(1:n, 1:n, 1:nz), ierr, help='temperature', grid='box')  ! the interior, no copy
  call check(ierr, 'cuview_add_field')
  call cuview_add_param(pub, 'alpha', 0.1d0, 0d0, 0.2d0, ierr, help='kappa dt / dx**2 (stable up to 2/9)')
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
      call diffuse(T, Tn, alpha)
      step = step + 1
    end do
    call cuview_publish(pub, step, real(step, c_double), ierr)   ! never waits for a viewer
    call check(ierr, 'cuview_publish')
  end do
  call cuview_close(pub)
end program fortran_heat
