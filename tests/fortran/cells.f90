! A Fortran program whose arrays' element (i, j, k) a reader must see at cell (i-1, j-1, k-1):
! T(i, j, k) = i + 10 j + 100 k (float32) and N(i, j, k) = -(i + 10 j + 100 k) (int32), on a grid of
! 6 x 5 x 4 (Fortran's shape); it publishes until `cuview-ctl shutdown`. With --section it first
! declares a section whose first axis is not of unit stride, which must be refused naming the
! field, and prints the message. With --halo it publishes instead, in place, the interiors of arrays
! with ghost cells on the grid 'box' (origin 0.5, -1, 2 m; spacing 0.25, 0.5, 2 m): a real(8) one
! with a halo of 1, H1(i, j, k) = i + 10 j + 100 k + 1/3, one with a halo of 2, H2 = -H1 (declared
! without grid=), and an integer(8) one, field K of L(i, j, k) = 2**40 + i + 10 j + 100 k; every
! ghost cell holds -999. Beside the box, on a 2-D grid of its own ('surface', 6 x 5, from x = 10 m),
! field S of S(i, j) = i + 10 j (real(4)).
! It first prints the refusals of the whole array (ghost cells too) on the grid of its interior,
! and of a complex array.
! With --errors OPTIONS it makes the mistakes whose messages must name this module's calls (a name
! in use, an unknown preset, no field, a declaration after start, host memory declared as device
! memory), prints each, and closes; OPTIONS go to cuview_create (log=error).
program cells
  use, intrinsic :: iso_c_binding
  use cuview
  implicit none
  type(cuview_publisher) :: pub, twin, empty
  real(c_float), allocatable, target :: T(:, :, :)
  integer(c_int32_t), allocatable, target :: N(:, :, :)
  real(c_double), allocatable, target :: H1(:, :, :), H2(:, :, :)
  integer(c_int64_t), allocatable, target :: L(:, :, :)
  complex(c_double_complex), target :: Z(6, 5, 4)
  real(c_float), target :: S(6, 5)
  character(len=64) :: name, arg, options
  integer :: i, j, k, ierr
  integer(c_int64_t) :: step
  call get_command_argument(1, name)
  call get_command_argument(2, arg)
  call get_command_argument(3, options)
  allocate (T(6, 5, 4), N(6, 5, 4))
  do k = 1, 4
    do j = 1, 5
      do i = 1, 6
        T(i, j, k) = real(i + 10*j + 100*k, c_float)
        N(i, j, k) = -(i + 10*j + 100*k)
      end do
    end do
  end do
  call cuview_create(pub, trim(name), backend='host', options=trim(options), status=ierr)
  if (ierr /= cuview_ok) error stop 'cuview_create failed'
  if (trim(arg) == '--errors') then
    call cuview_create(twin, trim(name), backend='host', status=ierr)
    call report('name in use', ierr)
    call cuview_create(empty, trim(name)//'-empty', backend='host', options=trim(options), status=ierr)
    if (ierr /= cuview_ok) error stop 'cuview_create of the empty one failed'
    call cuview_use_preset(empty, 'cold', ierr)
    call report('unknown preset', ierr)
    call cuview_start(empty, ierr)
    call report('no field', ierr)
    call cuview_close(empty)
    call cuview_add_field_ptr(pub, 'D', 'float32', shape(T), c_loc(T), cuview_memory_device, ierr)
    call report('host memory as device', ierr)
    call cuview_add_field(pub, 'T', T, ierr)
    call cuview_start(pub, ierr)
    if (ierr /= cuview_ok) error stop 'cuview_start failed'
    call cuview_add_field(pub, 'late', N, ierr)
    call report('after start', ierr)
    call cuview_close(pub)
    stop
  end if
  if (trim(arg) == '--section') then
    call cuview_add_field(pub, 'strided', T(1:6:2, :, :), ierr)
    write (*, '(a,i0,a,a)') 'status ', ierr, ': ', cuview_last_error()
    call cuview_close(pub)
    stop
  end if
  if (trim(arg) == '--halo') then
    allocate (H1(0:7, 0:6, 0:5), H2(-1:8, -1:7, -1:6), L(0:7, 0:6, 0:5))
    H1 = -999
    H2 = -999
    L = -999
    do k = 1, 4
      do j = 1, 5
        do i = 1, 6
          H1(i, j, k) = real(i + 10*j + 100*k, c_double) + 1d0/3d0
          H2(i, j, k) = -H1(i, j, k)
          L(i, j, k) = 2_c_int64_t**40 + (i + 10*j + 100*k)
        end do
      end do
    end do
    Z = 0
    call cuview_add_grid(pub, 'box', [6, 5, 4], ierr, origin=[0.5d0, -1d0, 2d0], spacing=[0.25d0, 0.5d0, 2d0], &
                         units='m')
    if (ierr /= cuview_ok) error stop 'cuview_add_grid failed'
    call cuview_add_field(pub, 'whole', H1, ierr, grid='box')
    call report('not the grid', ierr)
    call cuview_add_field(pub, 'Z', Z, ierr)
    call report('complex', ierr)
    call cuview_add_field(pub, 'H1', H1(1:6, 1:5, 1:4), ierr, grid='box', help='halo of 1')
    if (ierr /= cuview_ok) error stop 'cuview_add_field H1 failed'
    call cuview_add_field(pub, 'H2', H2(1:6, 1:5, 1:4), ierr)
    if (ierr /= cuview_ok) error stop 'cuview_add_field H2 failed'
    call cuview_add_field(pub, 'K', L(1:6, 1:5, 1:4), ierr, grid='box')
    if (ierr /= cuview_ok) error stop 'cuview_add_field K failed'
    do j = 1, 5
      do i = 1, 6
        S(i, j) = real(i + 10*j, c_float)
      end do
    end do
    call cuview_add_grid(pub, 'surface', [6, 5], ierr, origin=[10d0, 0d0], units='m')
    if (ierr /= cuview_ok) error stop 'cuview_add_grid surface failed'
    call cuview_add_field(pub, 'S', S, ierr, grid='surface')
    if (ierr /= cuview_ok) error stop 'cuview_add_field S failed'
  else
    call cuview_add_field(pub, 'T', T, ierr)
    if (ierr /= cuview_ok) error stop 'cuview_add_field T failed'
    call cuview_add_field(pub, 'N', N, ierr)
    if (ierr /= cuview_ok) error stop 'cuview_add_field N failed'
  end if
  call cuview_publish(pub, 1_c_int64_t, 0d0, ierr)
  write (*, '(a,i0,a,a)') 'publish before start: status ', ierr, ': ', cuview_last_error()
  call cuview_start(pub, ierr)
  if (ierr /= cuview_ok) error stop 'cuview_start failed'
  step = 0
  do
    call cuview_poll(pub, ierr)
    if (cuview_shutdown_requested(pub)) exit
    call cuview_wait(pub, 20, ierr)
    step = step + 1
    call cuview_publish(pub, step, real(step, c_double), ierr)
    if (ierr /= cuview_ok) error stop 'cuview_publish failed'
  end do
  call cuview_close(pub)

contains

  subroutine report(what, status)
    character(len=*), intent(in) :: what
    integer, intent(in) :: status
    write (*, '(a,a,i0,a,a)') what, ': status ', status, ': ', cuview_last_error()
  end subroutine report
end program cells
