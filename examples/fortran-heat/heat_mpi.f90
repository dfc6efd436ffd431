! The same heat equation with its box split over MPI ranks along k (z): each rank publishes its
! slab as one part of one name, and viewers see one box (module cuview_mpi; docs/sdk.md).
!   mpirun -n 2 fortran-heat-mpi --name heat3f [--size 64] [--steps N] [--hold]
program fortran_heat_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use cuview
  use cuview_mpi
  use heat_common
  implicit none
  type(cuview_publisher) :: pub
  real(c_float), allocatable, target :: T(:, :, :), Tn(:, :, :)
  real(c_float), allocatable :: below(:, :), above(:, :)
  character(len=64) :: name
  integer :: n, ierr, i, rank, size_, nz, k0, up, down
  integer(c_int64_t) :: step, limit, steps, s
  logical :: hold
  real(c_double) :: alpha

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size_, ierr)
  call options(name, n, limit, hold)
  if (mod(n, size_) /= 0) then
    if (rank == 0) write (*, '(a)') 'fortran-heat-mpi: --size must be a multiple of the number of ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  nz = n/size_
  k0 = rank*nz
  down = merge(MPI_PROC_NULL, rank - 1, rank == 0)
  up = merge(MPI_PROC_NULL, rank + 1, rank == size_ - 1)
  allocate (T(n, n, nz), Tn(n, n, nz), below(n, n), above(n, n))
  call initial(T, k0)
  call cuview_mpi_create(pub, MPI_COMM_WORLD, trim(name), [n, n, n], [0, 0, k0], ierr, &
                         options='title="fortran heat (MPI)"')
  call check(ierr, 'cuview_mpi_create')
  call cuview_add_field(pub, 'T', T, ierr, help='temperature')
  call check(ierr, 'cuview_add_field')
  call cuview_add_param(pub, 'alpha', 0.1d0, 0d0, 1d0/6d0, ierr, help='diffusivity (stable up to 1/6)')
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
      below = 0
      above = 0
      call MPI_Sendrecv(T(:, :, nz), n*n, MPI_REAL, up, 1, below, n*n, MPI_REAL, down, 1, MPI_COMM_WORLD, &
                        MPI_STATUS_IGNORE, ierr)
      call MPI_Sendrecv(T(:, :, 1), n*n, MPI_REAL, down, 2, above, n*n, MPI_REAL, up, 2, MPI_COMM_WORLD, &
                        MPI_STATUS_IGNORE, ierr)
      call diffuse_block(T, Tn, real(alpha, c_float), below, above)
      step = step + 1
    end do
    call cuview_mpi_publish(pub, MPI_COMM_WORLD, step, real(step, c_double), ierr)
    call check(ierr, 'cuview_mpi_publish')
  end do
  call cuview_close(pub)
  call MPI_Finalize(ierr)
end program fortran_heat_mpi
