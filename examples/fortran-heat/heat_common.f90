! What both heat programs share: options, the initial state, one diffusion step, strokes.
module heat_common
  use, intrinsic :: iso_c_binding
  use cuview
  implicit none
contains
  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    if (ierr /= cuview_ok) then
      write (*, '(a)') 'fortran-heat: '//what//' failed: '//cuview_last_error()
      error stop 1
    end if
  end subroutine check

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
  end subroutine options

  !> A hot ball in the middle of the global box; `k0`: this block's first k in the global grid, 0-based.
  subroutine initial(T, k0)
    real(c_float), intent(out) :: T(:, :, :)
    integer, intent(in) :: k0
    integer :: i, j, k, n
    n = size(T, 1)
    do k = 1, size(T, 3)
      do j = 1, size(T, 2)
        do i = 1, n
          T(i, j, k) = merge(1.0, 0.0, (i - n/2)**2 + (j - n/2)**2 + (k + k0 - n/2)**2 < (n/6)**2)
        end do
      end do
    end do
  end subroutine initial

  !> One explicit step with cold (0) walls: T <- T + alpha * laplacian(T). `below` and `above`:
  !> the neighbouring planes in k (the walls' zeros, or a neighbour rank's halo).
  subroutine diffuse_block(T, Tn, alpha, below, above)
    real(c_float), intent(inout) :: T(:, :, :)
    real(c_float), intent(inout) :: Tn(:, :, :)
    real(c_float), intent(in) :: alpha, below(:, :), above(:, :)
    integer :: i, j, k, nx, ny, nz
    real(c_float) :: w, e, s, nn, b, a
    nx = size(T, 1)
    ny = size(T, 2)
    nz = size(T, 3)
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          w = 0
          e = 0
          s = 0
          nn = 0
          if (i > 1) w = T(i - 1, j, k)
          if (i < nx) e = T(i + 1, j, k)
          if (j > 1) s = T(i, j - 1, k)
          if (j < ny) nn = T(i, j + 1, k)
          if (k > 1) then
            b = T(i, j, k - 1)
          else
            b = below(i, j)
          end if
          if (k < nz) then
            a = T(i, j, k + 1)
          else
            a = above(i, j)
          end if
          Tn(i, j, k) = T(i, j, k) + alpha*(w + e + s + nn + b + a - 6*T(i, j, k))
        end do
      end do
    end do
    T = Tn
  end subroutine diffuse_block

  subroutine diffuse(T, Tn, alpha)
    real(c_float), intent(inout) :: T(:, :, :), Tn(:, :, :)
    real(c_float), intent(in) :: alpha
    real(c_float), allocatable :: zero(:, :)
    allocate (zero(size(T, 1), size(T, 2)))
    zero = 0
    call diffuse_block(T, Tn, alpha, zero, zero)
  end subroutine diffuse

  !> What the last poll (or MPI turn) asked for, applied: alpha, a reset (the hot ball again, step 0)
  !> and the strokes. `k0`: this block's first k in the global grid, 0-based.
  subroutine steer(pub, T, k0, alpha, step)
    type(cuview_publisher), intent(in) :: pub
    real(c_float), intent(inout) :: T(:, :, :)
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

  !> Stroke i: a ball of heat (value 1) or cold (0) at cell (x, y, z), 0-based, global; k0 as above.
  subroutine apply_stroke(pub, i, T, k0)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: i, k0
    real(c_float), intent(inout) :: T(:, :, :)
    character(len=:), allocatable :: input
    real(c_double) :: x, y, z, r
    integer :: v, ierr, a, b, c
    call cuview_stroke(pub, i, input, x, y, z, r, v, ierr)
    if (ierr /= cuview_ok .or. input /= 'heat') return
    do c = 1, size(T, 3)
      do b = 1, size(T, 2)
        do a = 1, size(T, 1)
          if ((a - 1 - x)**2 + (b - 1 - y)**2 + (c - 1 + k0 - z)**2 <= r**2) T(a, b, c) = real(v, c_float)
        end do
      end do
    end do
  end subroutine apply_stroke
end module heat_common
