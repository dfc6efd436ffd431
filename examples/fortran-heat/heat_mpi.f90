! The same heat equation with its box split over MPI ranks along z: each rank holds its slab of
! nzl layers with a layer of ghost cells, receives its z-neighbours' edge layers into them at every
! step, and publishes its slab's interior, in place, as one part of one name on its own grid (its
! origin at its first cell); viewers see one box (module cuview_mpi; docs/sdk.md).
!   mpirun -n 2 fortran-heat-mpi --name heat3f [--size 64] [--steps N] [--hold]
program fortran_heat_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use cuview
  use cuview_mpi
  use heat_common
  implicit none
  type(cuview_publisher) :: pub
  real(c_double), allocatable, target :: T(:, :, :)  ! target: the publisher reads it in place
  real(c_double), allocatable :: Tn(:, :, :)
  character(len=64) :: name
  integer :: n, ierr, i, rank, ranks, nzl, k0, up, down, layer
  integer(c_int64_t) :: step, limit, steps, s
  logical :: hold
  real(c_double) :: alpha

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
  call options(name, n, limit, hold)
  if (mod(n/2, ranks) /= 0) then
    if (rank == 0) write (*, '(a)') 'fortran-heat-mpi: --size must be a multiple of 2 x the number of ranks: ' // &
                                    'its n/2 layers along z are split evenly'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  nzl = n/2/ranks
  k0 = rank*nzl                                        ! this slab's first layer in the box
  down = merge(MPI_PROC_NULL, rank - 1, rank == 0)     ! no neighbour: the ghost layer stays 0, a cold wall
  up = merge(MPI_PROC_NULL, rank + 1, rank == ranks - 1)
  allocate (T(0:n + 1, 0:n + 1, 0:nzl + 1), Tn(n, n, nzl))
  layer = (n + 2)**2                                   ! one z layer, its ghost cells too
  call initial(T, k0)
  call cuview_mpi_create(pub, MPI_COMM_WORLD, trim(name), [n, n, n/2], [0, 0, k0], ierr, &
                         options='title="fortran heat (MPI)"')
  call check(ierr, 'cuview_mpi_create')
  call cuview_add_grid(pub, 'box', [n, n, nzl], ierr, origin=[dx/2, dy/2, (k0 + 0.5d0)*dz], spacing=[dx, dy, dz], &
                       units='mm')
  call check(ierr, 'cuview_add_grid')
  call cuview_add_field(pub, 'T', T(1:n, 1:n, 1:nzl), ierr, help='temperature', grid='box')  ! the interior, no copy
  call check(ierr, 'cuview_add_field')
  call cuview_add_param(pub, 'alpha', 0.1d0, 0d0, 0.2d0, ierr, help='kappa dt / dx**2 (stable up to 2/9)')
  call check(ierr, 'cuview_add_param')
  call cuview_add_input(pub, 'heat', ierr)
  call check(ierr, 'cuview_add_input')
  call cuview_start(pub, ierr)
  call check(ierr, 'cuview_start')
  step = 0
  do
    s = 4
    if (limit > 0) s = min(s, max(limit - step, 0_c_int64_t))
    call cuview_mpi_turn(pub, MPI_COMM_WORLD, s, limit > 0 .and. step >= limit .and. .not. hold, steps, ierr)
    call check(ierr, 'cuview_mpi_turn')
    if (cuview_shutdown_requested(pub)) exit
    call steer(pub, T, k0, alpha, step)
    do i = 1, int(steps)
      ! The halo exchange: a slab's top layer becomes the ghost layer 0 of the slab above, its
      ! bottom layer the ghost layer nzl+1 of the slab below.
      call MPI_Sendrecv(T(:, :, nzl), layer, MPI_DOUBLE_PRECISION, up, 1, T(:, :, 0), layer, &
                        MPI_DOUBLE_PRECISION, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Sendrecv(T(:, :, 1), layer, MPI_DOUBLE_PRECISION, down, 2, T(:, :, nzl + 1), layer, &
                        MPI_DOUBLE_PRECISION, up, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call diffuse(T, Tn, alpha)
      step = step + 1
    end do
    call cuview_mpi_publish(pub, MPI_COMM_WORLD, step, real(step, c_double), ierr)
    call check(ierr, 'cuview_mpi_publish')
  end do
  call cuview_close(pub)
  call MPI_Finalize(ierr)
end program fortran_heat_mpi
