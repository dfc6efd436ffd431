! What both heat programs share: options, the box, the initial state, one diffusion step, strokes.
! The box is a cube n mm wide of n x n x n/2 cells of 1 x 1 x 2 mm (dx = dy = 1 mm, dz = 2 mm),
! its corner at 0: cell (i, j, k) has its centre at ((i-1/2) dx, (j-1/2) dy, (k-1/2) dz). A block
! of it is held as T(0:nx+1, 0:ny+1, 0:nz+1) in real(8): its interior T(1:nx, 1:ny, 1:nz) and one
! layer of ghost cells around it, which hold the walls' 0 (cold walls) or a neighbour rank's layer.
module heat_common
  use, intrinsic :: iso_c_binding
  use cuview
  implicit none
  real(c_double), parameter :: dx = 1, dy = 1, dz = 2  ! mm
contains
  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    if (ierr /= cuview_ok) then
      write (*, '(a)') 'fortran-heat: '//what//' failed: '//cuview_last_error()
      error stop 1
    end if
  end subroutine check

  !> --size n: n cells along x and y, n/2 along z (an even number).
  subroutine options(name, n, limit, hold)
    character(len=*), intent(out) :: name
    integer, intent(out) :: n
    integer(c_int64_t), intent(out) :: limit
    logical, intent(out) :: hold
    character(len=64) :: arg, value
    integer :: i
    name = 'heat3f'
    n = 64
    limit = 0
    hold = .false.
    i = 1
    do while (i <= command_argument_count())
      call get_command_argument(i, arg)
      value = ''
      if (i < command_argument_count()) call get_command_argument(i + 1, value)
      select case (trim(arg))
      case ('--name')
        name = value
        i = i + 1
      case ('--size')
        read (value, *) n
        i = i + 1
      case ('--steps')
        read (value, *) limit
        i = i + 1
      case ('--hold')
        hold = .true.
      case default
        write (*, '(a)') 'fortran-heat: unknown option '//trim(arg)//'; use --name NAME --size N --steps N --hold'
        error stop 2
      end select
      i = i + 1
    end do
    if (n < 2 .or. mod(n, 2) /= 0) then
      write (*, '(a)') 'fortran-heat: --size must be an even number of cells (n x n x n/2 cells of 1 x 1 x 2 mm)'
      error stop 2
    end if
  end subroutine options

  !> A hot ball of radius n/6 mm in the middle of the cube, ghost cells 0 (cold walls). `k0`: this
  !> block's first layer in the whole box, 0-based.
  subroutine initial(T, k0)
    real(c_double), intent(out) :: T(0:, 0:, 0:)
    integer, intent(in) :: k0
    integer :: i, j, k
    real(c_double) :: c, r
    c = (ubound(T, 1) - 1)*dx/2  ! the middle, in mm from the corner
    r = c/3
    T = 0
    do k = 1, ubound(T, 3) - 1
      do j = 1, ubound(T, 2) - 1
        do i = 1, ubound(T, 1) - 1
          if (((i - 0.5d0)*dx - c)**2 + ((j - 0.5d0)*dy - c)**2 + ((k0 + k - 0.5d0)*dz - c)**2 < r**2) T(i, j, k) = 1
        end do
      end do
    end do
  end subroutine initial

  !> One explicit step of dT/dt = kappa laplacian(T), alpha = kappa dt / dx**2, reading the ghost
  !> cells; the interior of T is updated in place (the publisher reads it there).
  subroutine diffuse(T, Tn, alpha)
    real(c_double), intent(inout) :: T(0:, 0:, 0:)
    real(c_double), intent(out) :: Tn(:, :, :)
    real(c_double), intent(in) :: alpha
    integer :: nx, ny, nz
    nx = size(Tn, 1)
    ny = size(Tn, 2)
    nz = size(Tn, 3)
    Tn = T(1:nx, 1:ny, 1:nz) + alpha*( &
         (T(0:nx - 1, 1:ny, 1:nz) - 2*T(1:nx, 1:ny, 1:nz) + T(2:nx + 1, 1:ny, 1:nz)) &
         + (dx/dy)**2*(T(1:nx, 0:ny - 1, 1:nz) - 2*T(1:nx, 1:ny, 1:nz) + T(1:nx, 2:ny + 1, 1:nz)) &
         + (dx/dz)**2*(T(1:nx, 1:ny, 0:nz - 1) - 2*T(1:nx, 1:ny, 1:nz) + T(1:nx, 1:ny, 2:nz + 1)))
    T(1:nx, 1:ny, 1:nz) = Tn
  end subroutine diffuse

  !> What the last poll (or MPI turn) asked for, applied: alpha, a reset (the hot ball again, step 0)
  !> and the strokes. `k0`: this block's first layer in the whole box, 0-based.
  subroutine steer(pub, T, k0, alpha, step)
    type(cuview_publisher), intent(in) :: pub
    real(c_double), intent(inout) :: T(0:, 0:, 0:)
    integer, intent(in) :: k0
    real(c_double), intent(out) :: alpha
    integer(c_int64_t), intent(inout) :: step
    integer :: i, ierr
    call cuview_param(pub, 'alpha', alpha, ierr)
    call check(ierr, 'cuview_param')
    if (cuview_reset_requested(pub)) then
      call initial(T, k0)
      step = 0
    end if
    do i = 1, cuview_stroke_count(pub)
      call apply_stroke(pub, i, T, k0)
    end do
  end subroutine steer

  !> Stroke i: a ball of heat (value 1) or cold (0) around cell (x, y, z), in cells, 0-based, of
  !> the whole box; k0 as above.
  subroutine apply_stroke(pub, i, T, k0)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: i, k0
    real(c_double), intent(inout) :: T(0:, 0:, 0:)
    character(len=:), allocatable :: input
    real(c_double) :: x, y, z, r
    integer :: v, ierr, a, b, c
    call cuview_stroke(pub, i, input, x, y, z, r, v, ierr)
    if (ierr /= cuview_ok .or. input /= 'heat') return
    do c = 1, ubound(T, 3) - 1
      do b = 1, ubound(T, 2) - 1
        do a = 1, ubound(T, 1) - 1
          if ((a - 1 - x)**2 + (b - 1 - y)**2 + (c - 1 + k0 - z)**2 <= r**2) T(a, b, c) = v
        end do
      end do
    end do
  end subroutine apply_stroke
end module heat_common
