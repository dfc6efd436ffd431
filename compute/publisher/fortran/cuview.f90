! cuview for Fortran 2018: publish a running program's arrays to cuview viewers. A thin layer over
! the C API (cuview/publisher.h, libcuview-publisher.so) through iso_c_binding; docs/sdk.md.
!
!   use cuview
!   type(cuview_publisher) :: pub
!   real(8), allocatable, target :: T(:,:,:)              ! target: the publisher reads it in place
!   allocate (T(0:nx+1, 0:ny+1, 0:nz+1))                 ! ghost cells around the interior
!   call cuview_create(pub, 'heat', status=ierr)
!   call cuview_add_grid(pub, 'box', [nx, ny, nz], ierr, spacing=[dx, dy, dz], units='m')
!   call cuview_add_field(pub, 'T', T(1:nx, 1:ny, 1:nz), ierr, grid='box')  ! T(i,j,k): cell (i-1, j-1, k-1)
!   call cuview_add_param(pub, 'alpha', 0.1d0, 0d0, 0.25d0, ierr)
!   call cuview_start(pub, ierr)
!   do step = 1, nsteps
!     call cuview_poll(pub, ierr)
!     call cuview_param(pub, 'alpha', alpha, ierr)
!     ... advance T ...
!     call cuview_publish(pub, int(step, c_int64_t), t, ierr)   ! never waits for a viewer
!   end do
!   call cuview_close(pub)
!
! Arrays are column-major: the first index runs fastest. The module declares a field of shape
! (nx, ny, nz) as the grid {nz, ny, nx} slowest axis first, so element (i, j, k) of the array given
! (for a section, counted from 1 in the section) is the cell at x = i-1, y = j-1, z = k-1 that
! viewers show, draw into and report; strokes arrive in those (0-based) cell coordinates. Every call sets `status` (0: done; else cuview_last_error() says
! what failed and what to do). Device memory (CUDA Fortran's c_devloc, OpenACC's acc_deviceptr):
! cuview_add_field_ptr with the pointer as type(c_ptr), memory=cuview_memory_device.
module cuview
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: cuview_ok = 0
  integer(c_int), parameter, public :: cuview_memory_host = 0, cuview_memory_device = 1
  integer, parameter :: bad_value = 6  ! CUVIEW_BAD_VALUE (cuview/status.h)
  !> A failure this module finds itself (C cannot see it): cuview_last_error() says it until the
  !> next declaration.
  character(len=:), allocatable :: own_error

  type, public :: cuview_publisher
    type(c_ptr) :: handle = c_null_ptr
  end type cuview_publisher

  public :: cuview_create, cuview_add_grid, cuview_add_field, cuview_add_field_ptr, cuview_add_param, cuview_add_preset, &
            cuview_add_input, cuview_use_preset, cuview_start, cuview_publish, cuview_record_step, cuview_poll, &
            cuview_param, cuview_changed_count, cuview_reset_requested, cuview_shutdown_requested, &
            cuview_stroke_count, cuview_stroke, cuview_steps_allowed, cuview_paused, cuview_wait, &
            cuview_checkpoint_enable, cuview_checkpoint_count, cuview_checkpoint_request, &
            cuview_checkpoint_written, cuview_checkpoint_failed, cuview_close, cuview_last_error, c_string, &
            fortran_string, create_arguments

  interface
    function c_create(name, backend, device, sharing, options, out) bind(c, name='cuview_publisher_create')
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: name(*), backend(*), sharing(*), options(*)
      integer(c_int), value :: device
      type(c_ptr), intent(out) :: out
      integer(c_int) :: c_create
    end function c_create
    function c_add_field(pub, name, dtype, ndim, dims, components, data, memory, help) &
        bind(c, name='cuview_publisher_add_field')
      import :: c_int, c_char, c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: pub, data
      character(kind=c_char), intent(in) :: name(*), dtype(*), help(*)
      integer(c_int32_t), value :: ndim, components
      integer(c_int64_t), intent(in) :: dims(*)
      integer(c_int), value :: memory
      integer(c_int) :: c_add_field
    end function c_add_field
    function c_add_grid(pub, name, ndim, dims, origin, spacing, units) bind(c, name='cuview_publisher_add_grid')
      import :: c_int, c_char, c_ptr, c_int32_t, c_int64_t, c_double
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*), units(*)
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: dims(*)
      real(c_double), intent(in) :: origin(*), spacing(*)
      integer(c_int) :: c_add_grid
    end function c_add_grid
    ! The array arrives as its descriptor (ISO_Fortran_binding.h's CFI_cdesc_t): type, rank,
    ! extents and byte strides; publisher_fortran.cpp maps them (the one table of types).
    function c_add_field_array(pub, grid, name, a, components, memory, help) &
        bind(c, name='cuview_publisher_add_field_fortran')
      import :: c_int, c_char, c_ptr, c_int32_t
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: grid(*), name(*), help(*)
      type(*), dimension(..), intent(in) :: a
      integer(c_int32_t), value :: components
      integer(c_int), value :: memory
      integer(c_int) :: c_add_field_array
    end function c_add_field_array
    function c_add_param(pub, name, value, vmin, vmax, whole, help) bind(c, name='cuview_publisher_add_param')
      import :: c_int, c_char, c_ptr, c_double
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*), help(*)
      real(c_double), value :: value, vmin, vmax
      integer(c_int), value :: whole
      integer(c_int) :: c_add_param
    end function c_add_param
    function c_add_preset(pub, name, values) bind(c, name='cuview_publisher_add_preset')
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*), values(*)
      integer(c_int) :: c_add_preset
    end function c_add_preset
    function c_add_input(pub, name, kind, help) bind(c, name='cuview_publisher_add_input')
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*), kind(*), help(*)
      integer(c_int) :: c_add_input
    end function c_add_input
    function c_use_preset(pub, name) bind(c, name='cuview_publisher_use_preset')
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: c_use_preset
    end function c_use_preset
    function c_start(pub) bind(c, name='cuview_publisher_start')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int) :: c_start
    end function c_start
    function c_publish(pub, step, time, stream, published) bind(c, name='cuview_publisher_publish')
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: pub, stream
      integer(c_int64_t), value :: step
      real(c_double), value :: time
      integer(c_int), intent(out) :: published
      integer(c_int) :: c_publish
    end function c_publish
    function c_record_step(pub, step, time) bind(c, name='cuview_publisher_record_step')
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: pub
      integer(c_int64_t), value :: step
      real(c_double), value :: time
      integer(c_int) :: c_record_step
    end function c_record_step
    function c_poll(pub) bind(c, name='cuview_publisher_poll')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int) :: c_poll
    end function c_poll
    function c_param(pub, name, value) bind(c, name='cuview_publisher_param')
      import :: c_int, c_char, c_ptr, c_double
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), intent(out) :: value
      integer(c_int) :: c_param
    end function c_param
    function c_changed_count(pub) bind(c, name='cuview_publisher_changed_count')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: pub
      integer(c_size_t) :: c_changed_count
    end function c_changed_count
    function c_reset_requested(pub) bind(c, name='cuview_publisher_reset_requested')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int) :: c_reset_requested
    end function c_reset_requested
    function c_shutdown_requested(pub) bind(c, name='cuview_publisher_shutdown_requested')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int) :: c_shutdown_requested
    end function c_shutdown_requested
    function c_stroke_count(pub) bind(c, name='cuview_publisher_stroke_count')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: pub
      integer(c_size_t) :: c_stroke_count
    end function c_stroke_count
    function c_stroke(pub, i, input, x, y, z, radius, value) bind(c, name='cuview_publisher_stroke')
      import :: c_int, c_ptr, c_size_t, c_double
      type(c_ptr), value :: pub
      integer(c_size_t), value :: i
      type(c_ptr), intent(out) :: input
      real(c_double), intent(out) :: x, y, z, radius
      integer(c_int), intent(out) :: value
      integer(c_int) :: c_stroke
    end function c_stroke
    function c_steps_allowed(pub, wanted) bind(c, name='cuview_publisher_steps_allowed')
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: pub
      integer(c_int64_t), value :: wanted
      integer(c_int64_t) :: c_steps_allowed
    end function c_steps_allowed
    function c_paused(pub) bind(c, name='cuview_publisher_paused')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int) :: c_paused
    end function c_paused
    function c_wait(pub, timeout_ms) bind(c, name='cuview_publisher_wait')
      import :: c_int, c_ptr
      type(c_ptr), value :: pub
      integer(c_int), value :: timeout_ms
      integer(c_int) :: c_wait
    end function c_wait
    function c_checkpoint_enable(pub, dir, every_s) bind(c, name='cuview_publisher_checkpoint_enable')
      import :: c_int, c_char, c_ptr, c_double
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: dir(*)
      real(c_double), value :: every_s
      integer(c_int) :: c_checkpoint_enable
    end function c_checkpoint_enable
    function c_checkpoint_count(pub) bind(c, name='cuview_publisher_checkpoint_count')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: pub
      integer(c_size_t) :: c_checkpoint_count
    end function c_checkpoint_count
    function c_checkpoint_request(pub, i, ticket, path) bind(c, name='cuview_publisher_checkpoint_request')
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: pub
      integer(c_size_t), value :: i
      integer(c_int64_t), intent(out) :: ticket
      type(c_ptr), intent(out) :: path
      integer(c_int) :: c_checkpoint_request
    end function c_checkpoint_request
    function c_checkpoint_written(pub, ticket, path, step, time, bytes) bind(c, name='cuview_publisher_checkpoint_written')
      import :: c_int, c_char, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: pub
      integer(c_int64_t), value :: ticket, step, bytes
      character(kind=c_char), intent(in) :: path(*)
      real(c_double), value :: time
      integer(c_int) :: c_checkpoint_written
    end function c_checkpoint_written
    function c_checkpoint_failed(pub, ticket, error) bind(c, name='cuview_publisher_checkpoint_failed')
      import :: c_int, c_char, c_ptr, c_int64_t
      type(c_ptr), value :: pub
      integer(c_int64_t), value :: ticket
      character(kind=c_char), intent(in) :: error(*)
      integer(c_int) :: c_checkpoint_failed
    end function c_checkpoint_failed
    subroutine c_close(pub, reason) bind(c, name='cuview_publisher_close')
      import :: c_char, c_ptr
      type(c_ptr), value :: pub
      character(kind=c_char), intent(in) :: reason(*)
    end subroutine c_close
    function c_last_error() bind(c, name='cuview_last_error')
      import :: c_ptr
      type(c_ptr) :: c_last_error
    end function c_last_error
  end interface

contains

  !> `s` without trailing blanks, NUL-terminated, for C.
  pure function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s)//c_null_char
  end function c_string

  !> The NUL-terminated C string at `p` as a Fortran string ('' for a null pointer).
  function fortran_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    call c_f_pointer(p, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function fortran_string

  !> The message of the last failure on this thread: what failed and what to do.
  function cuview_last_error() result(s)
    character(len=:), allocatable :: s
    if (allocated(own_error)) then
      if (len(own_error) > 0) then
        s = own_error
        return
      end if
    end if
    s = fortran_string(c_last_error())
  end function cuview_last_error

  !> Claims `name` (viewers attach with --name NAME). backend 'auto' | 'cuda' | 'host'; device: the
  !> GPU (-1: the current one); sharing 'auto' | 'legacy' | 'vmm' | 'pool'; options as in
  !> cuview/publisher.h ('max_cost=0.01 fps=30 title="heat"').
  subroutine cuview_create(pub, name, backend, device, sharing, options, status)
    type(cuview_publisher), intent(out) :: pub
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: backend, sharing, options
    integer, intent(in), optional :: device
    integer, intent(out) :: status
    character(len=:), allocatable :: b, s, o
    integer(c_int) :: d
    call create_arguments(b, s, o, d, backend, sharing, options, device)
    status = c_create(c_string(name), c_string(b), d, c_string(s), c_string(o), pub%handle)
  end subroutine cuview_create

  !> cuview_create's optional arguments with their defaults filled in ('auto', 'auto', '', -1), for
  !> it and cuview_mpi_create; options gain api=fortran.
  subroutine create_arguments(b, s, o, d, backend, sharing, options, device)
    character(len=:), allocatable, intent(out) :: b, s, o
    integer(c_int), intent(out) :: d
    character(len=*), intent(in), optional :: backend, sharing, options
    integer, intent(in), optional :: device
    b = 'auto'
    s = 'auto'
    o = ''
    d = -1
    if (present(backend)) b = backend
    if (present(sharing)) s = sharing
    if (present(options)) o = options
    o = 'api=fortran '//o  ! errors name this module's calls and keywords, not C's
    if (present(device)) d = int(device, c_int)
  end subroutine create_arguments

  !> A grid fields lie on (grid= of cuview_add_field), with the program's coordinates: `dims`
  !> cells per axis, Fortran's shape (fastest first, [nx, ny, nz]); cell (i, j, k) (1-based) has its
  !> centre at origin + (i-1, j-1, k-1) * spacing, in `units` ('m'). origin (default 0) and spacing
  !> (default 1, each above 0) are real(c_double), one per axis, fastest first. A publisher may
  !> declare several grids (a volume, a surface, a probe line); the first is the run's own, the one
  !> the ranks of cuview_mpi decompose.
  subroutine cuview_add_grid(pub, name, dims, status, origin, spacing, units)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    integer, intent(in) :: dims(:)
    integer, intent(out) :: status
    real(c_double), intent(in), optional :: origin(:), spacing(:)
    character(len=*), intent(in), optional :: units
    integer(c_int64_t) :: d(max(size(dims), 1))
    real(c_double) :: o(max(size(dims), 1)), h(max(size(dims), 1))
    integer :: n, i
    n = size(dims)
    own_error = ''
    status = cuview_ok
    if (present(origin)) call check_per_axis(name, 'origin', size(origin), n, status)
    if (present(spacing) .and. status == cuview_ok) call check_per_axis(name, 'spacing', size(spacing), n, status)
    if (status /= cuview_ok) return
    o = 0
    h = 1
    do i = 1, n  ! reversed: the C API counts from the slowest axis
      d(i) = int(dims(n + 1 - i), c_int64_t)
      if (present(origin)) o(i) = origin(n + 1 - i)
      if (present(spacing)) h(i) = spacing(n + 1 - i)
    end do
    if (present(units)) then
      status = c_add_grid(pub%handle, c_string(name), int(n, c_int32_t), d, o, h, c_string(units))
    else
      status = c_add_grid(pub%handle, c_string(name), int(n, c_int32_t), d, o, h, c_string(''))
    end if
  end subroutine cuview_add_grid

  !> Refuses (own_error) a list of cuview_add_grid that does not hold one value per axis: C reads n.
  subroutine check_per_axis(grid, what, values, n, status)
    character(len=*), intent(in) :: grid, what
    integer, intent(in) :: values, n
    integer, intent(inout) :: status
    character(len=16) :: axes, got
    if (values == n) return
    write (axes, '(i0)') n
    write (got, '(i0)') values
    status = bad_value
    own_error = "grid '"//trim(grid)//"' has "//trim(axes)//" axes but its "//what//" has "//trim(got)// &
                " values; give one per axis, fastest first as the shape ([dx, dy, dz])"
  end subroutine check_per_axis

  !> A field from an array, read in place at every publish: real(4), real(8), integer(4) or
  !> integer(8) (c_float, c_double, c_int32_t, c_int64_t), 1 to 3 dimensions, declared with the
  !> target attribute. A section works as well, such as the interior T(1:nx, 1:ny, 1:nz) of an
  !> array with ghost cells T(0:nx+1, 0:ny+1, 0:nz+1): unit stride along the first axis, any stride
  !> between rows and layers; the publisher copies it out itself. gfortran passes an assumed-rank
  !> argument as a descriptor of the actual array, never a copy (checked: the descriptor's address is
  !> the parent's T(1, 1, 1)), so the address stays valid after this call. components=c (1 to 4: a
  !> vector, an RGBA colour): each cell holds c values, the array's first (fastest) extent, so
  !> c(4, nx, ny) is an RGBA field on the grid (nx, ny). grid=: a grid of cuview_add_grid (its
  !> shape must be the array's); without it, the first grid declared (or, with none, the first
  !> field's shape). memory=: the array's
  !> memory (cuview_memory_device for OpenACC's host_data use_device).
  subroutine cuview_add_field(pub, name, a, status, help, components, grid, memory)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    type(*), dimension(..), intent(in), target :: a
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: help, grid
    integer, intent(in), optional :: components
    integer(c_int), intent(in), optional :: memory
    integer(c_int32_t) :: c
    integer(c_int) :: m
    character(len=:), allocatable :: g, h
    own_error = ''
    c = 1
    if (present(components)) c = int(components, c_int32_t)
    m = cuview_memory_host
    if (present(memory)) m = memory
    g = ''
    if (present(grid)) g = grid
    h = ''
    if (present(help)) h = help
    status = c_add_field_array(pub%handle, c_string(g), c_string(name), a, c, m, c_string(h))
  end subroutine cuview_add_field

  !> cuview_add_field_ptr's declaration: Fortran's shape (fastest first) reversed.
  subroutine add_field_at(pub, name, dtype, fortran_shape, data, memory, status, help, components)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name, dtype
    integer, intent(in) :: fortran_shape(:)
    type(c_ptr), intent(in) :: data
    integer(c_int), intent(in) :: memory
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: help
    integer, intent(in), optional :: components
    integer(c_int64_t) :: dims(4)
    integer :: n, i, c, first
    character(len=16) :: want, got
    c = 1
    if (present(components)) c = components
    first = 1
    if (c > 1) first = 2  ! a cell's values are adjacent: the first (fastest) extent holds them
    n = min(size(fortran_shape) - first + 1, 4)
    do i = 1, n
      dims(i) = int(fortran_shape(first + n - i), c_int64_t)
    end do
    own_error = ''
    if (c > 1 .and. (size(fortran_shape) < 2 .or. fortran_shape(1) /= c)) then
      write (want, '(i0)') c
      write (got, '(i0)') fortran_shape(1)
      status = bad_value
      own_error = "field '"//trim(name)//"': components="//trim(want)//" needs an array whose first extent is "// &
                  trim(want)//" (a cell's values, then the grid: c(n, nx, ny)), but it is "//trim(got)
      return
    end if
    if (present(help)) then
      status = c_add_field(pub%handle, c_string(name), c_string(dtype), int(n, c_int32_t), dims, int(c, c_int32_t), &
                           data, memory, c_string(help))
    else
      status = c_add_field(pub%handle, c_string(name), c_string(dtype), int(n, c_int32_t), dims, int(c, c_int32_t), &
                           data, memory, c_string(''))
    end if
  end subroutine add_field_at

  !> A field from a pointer (device memory from CUDA Fortran or OpenACC, or host memory): `fortran_shape`
  !> fastest first, as the array it points at is declared; dtype 'float32' | 'float64' | 'float16' | 'int32' |
  !> 'int64' | 'uint8'. The array is contiguous here (for a section, cuview_add_field).
  !> components= (as for cuview_add_field): the values per cell, the array's first extent.
  subroutine cuview_add_field_ptr(pub, name, dtype, fortran_shape, data, memory, status, help, components)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name, dtype
    integer, intent(in) :: fortran_shape(:)
    type(c_ptr), intent(in) :: data
    integer(c_int), intent(in) :: memory
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: help
    integer, intent(in), optional :: components
    call add_field_at(pub, name, dtype, fortran_shape, data, memory, status, help, components)
  end subroutine cuview_add_field_ptr

  !> A steerable parameter: its default, its range, and whether it is a whole number.
  subroutine cuview_add_param(pub, name, value, vmin, vmax, status, integer_valued, help)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: value, vmin, vmax
    integer, intent(out) :: status
    logical, intent(in), optional :: integer_valued
    character(len=*), intent(in), optional :: help
    integer(c_int) :: whole
    whole = 0
    if (present(integer_valued)) then
      if (integer_valued) whole = 1
    end if
    if (present(help)) then
      status = c_add_param(pub%handle, c_string(name), value, vmin, vmax, whole, c_string(help))
    else
      status = c_add_param(pub%handle, c_string(name), value, vmin, vmax, whole, c_string(''))
    end if
  end subroutine cuview_add_param

  !> A named set of parameter values: 'alpha=0.2 sources=4'. The first preset is where a run starts
  !> (unless cuview_use_preset names another).
  subroutine cuview_add_preset(pub, name, values, status)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name, values
    integer, intent(out) :: status
    status = c_add_preset(pub%handle, c_string(name), c_string(values))
  end subroutine cuview_add_preset

  !> A mask viewers draw into; its strokes arrive by cuview_poll (cuview_stroke).
  subroutine cuview_add_input(pub, name, status)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    integer, intent(out) :: status
    status = c_add_input(pub%handle, c_string(name), c_string('mask'), c_string(''))
  end subroutine cuview_add_input

  subroutine cuview_use_preset(pub, name, status)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    integer, intent(out) :: status
    status = c_use_preset(pub%handle, c_string(name))
  end subroutine cuview_use_preset

  subroutine cuview_start(pub, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(out) :: status
    status = c_start(pub%handle)
  end subroutine cuview_start

  !> Publishes the declared arrays as frame `step` when a viewer reads and a frame is due; never
  !> waits for a viewer. stream: a cudaStream_t (CUDA Fortran's stream as type(c_ptr)) for device
  !> arrays; published: whether a frame was published.
  subroutine cuview_publish(pub, step, time, status, published, stream)
    type(cuview_publisher), intent(in) :: pub
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    integer, intent(out) :: status
    logical, intent(out), optional :: published
    type(c_ptr), intent(in), optional :: stream
    integer(c_int) :: p
    type(c_ptr) :: s
    s = c_null_ptr
    if (present(stream)) s = stream
    status = c_publish(pub%handle, step, time, s, p)
    if (present(published)) published = p /= 0
  end subroutine cuview_publish

  subroutine cuview_record_step(pub, step, time, status)
    type(cuview_publisher), intent(in) :: pub
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    integer, intent(out) :: status
    status = c_record_step(pub%handle, step, time)
  end subroutine cuview_record_step

  !> Takes what viewers asked since the last poll; the accessors below read it.
  subroutine cuview_poll(pub, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(out) :: status
    status = c_poll(pub%handle)
  end subroutine cuview_poll

  !> The value in effect of parameter `name`.
  subroutine cuview_param(pub, name, value, status)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: name
    real(c_double), intent(out) :: value
    integer, intent(out) :: status
    status = c_param(pub%handle, c_string(name), value)
  end subroutine cuview_param

  !> How many parameters the last poll changed (0: none).
  integer function cuview_changed_count(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_changed_count = int(c_changed_count(pub%handle))
  end function cuview_changed_count

  logical function cuview_reset_requested(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_reset_requested = c_reset_requested(pub%handle) /= 0
  end function cuview_reset_requested

  logical function cuview_shutdown_requested(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_shutdown_requested = c_shutdown_requested(pub%handle) /= 0
  end function cuview_shutdown_requested

  integer function cuview_stroke_count(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_stroke_count = int(c_stroke_count(pub%handle))
  end function cuview_stroke_count

  !> Stroke i (1-based) of the last poll: set the cells within `radius` of (x, y, z) (0-based cell
  !> coordinates: element (x+1, y+1, z+1); z is -1 on a plane) of input `input` to `value`.
  subroutine cuview_stroke(pub, i, input, x, y, z, radius, value, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: i
    character(len=:), allocatable, intent(out) :: input
    real(c_double), intent(out) :: x, y, z, radius
    integer, intent(out) :: value, status
    type(c_ptr) :: p
    integer(c_int) :: v
    status = c_stroke(pub%handle, int(i - 1, c_size_t), p, x, y, z, radius, v)
    value = int(v)
    input = fortran_string(p)
  end subroutine cuview_stroke

  !> How many of `wanted` steps to take now (0 while paused: then cuview_wait).
  integer(c_int64_t) function cuview_steps_allowed(pub, wanted)
    type(cuview_publisher), intent(in) :: pub
    integer(c_int64_t), intent(in) :: wanted
    cuview_steps_allowed = c_steps_allowed(pub%handle, wanted)
  end function cuview_steps_allowed

  logical function cuview_paused(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_paused = c_paused(pub%handle) /= 0
  end function cuview_paused

  !> Blocks until a viewer sends a request or timeout_ms pass.
  subroutine cuview_wait(pub, timeout_ms, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: timeout_ms
    integer, intent(out) :: status
    status = c_wait(pub%handle, int(timeout_ms, c_int))
  end subroutine cuview_wait

  subroutine cuview_checkpoint_enable(pub, dir, every_s, status)
    type(cuview_publisher), intent(in) :: pub
    character(len=*), intent(in) :: dir
    real(c_double), intent(in) :: every_s
    integer, intent(out) :: status
    status = c_checkpoint_enable(pub%handle, c_string(dir), every_s)
  end subroutine cuview_checkpoint_enable

  integer function cuview_checkpoint_count(pub)
    type(cuview_publisher), intent(in) :: pub
    cuview_checkpoint_count = int(c_checkpoint_count(pub%handle))
  end function cuview_checkpoint_count

  !> Checkpoint request i (1-based) of the last poll: the ticket to answer and the file.
  subroutine cuview_checkpoint_request(pub, i, ticket, path, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: i
    integer(c_int64_t), intent(out) :: ticket
    character(len=:), allocatable, intent(out) :: path
    integer, intent(out) :: status
    type(c_ptr) :: p
    status = c_checkpoint_request(pub%handle, int(i - 1, c_size_t), ticket, p)
    path = fortran_string(p)
  end subroutine cuview_checkpoint_request

  subroutine cuview_checkpoint_written(pub, ticket, path, step, time, bytes, status)
    type(cuview_publisher), intent(in) :: pub
    integer(c_int64_t), intent(in) :: ticket, step, bytes
    character(len=*), intent(in) :: path
    real(c_double), intent(in) :: time
    integer, intent(out) :: status
    status = c_checkpoint_written(pub%handle, ticket, c_string(path), step, time, bytes)
  end subroutine cuview_checkpoint_written

  subroutine cuview_checkpoint_failed(pub, ticket, error, status)
    type(cuview_publisher), intent(in) :: pub
    integer(c_int64_t), intent(in) :: ticket
    character(len=*), intent(in) :: error
    integer, intent(out) :: status
    status = c_checkpoint_failed(pub%handle, ticket, c_string(error))
  end subroutine cuview_checkpoint_failed

  !> Tells viewers the publisher is going ('shutdown', or the failure that ended the program) and frees it.
  subroutine cuview_close(pub, reason)
    type(cuview_publisher), intent(inout) :: pub
    character(len=*), intent(in), optional :: reason
    if (.not. c_associated(pub%handle)) return
    if (present(reason)) then
      call c_close(pub%handle, c_string(reason))
    else
      call c_close(pub%handle, c_string('shutdown'))
    end if
    pub%handle = c_null_ptr
  end subroutine cuview_close

end module cuview
