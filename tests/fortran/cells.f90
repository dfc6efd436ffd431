! A Fortran program whose arrays' element (i, j, k) a reader must see at cell (i-1, j-1, k-1):
! T(i, j, k) = i + 10 j + 100 k (float32) and N(i, j, k) = -(i + 10 j + 100 k) (int32), on a grid of
! 6 x 5 x 4 (Fortran's shape); it publishes until `cuview-ctl shutdown`. With --section it first
! declares a strided section, which must be refused naming the field, and prints the message.
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
  call cuview_add_field(pub, 'T', T, ierr)
  if (ierr /= cuview_ok) error stop 'cuview_add_field T failed'
  call cuview_add_field(pub, 'N', N, ierr)
  if (ierr /= cuview_ok) error stop 'cuview_add_field N failed'
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
