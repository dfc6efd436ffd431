! cuview for Fortran MPI programs: every rank publishes its block of a decomposed grid under one
! name, and viewers see one picture (cuview/publisher_mpi.h, libcuview-publisher-mpi.so; docs/sdk.md).
! The communicator is passed as an integer: `use mpi`'s, or mpi_f08's comm%MPI_VAL. Every call is
! collective over it. Shapes and offsets are Fortran's (fastest axis first, offsets 0-based cells):
!
!   call cuview_mpi_create(pub, MPI_COMM_WORLD, 'heat', [nx, ny, nz], [0, 0, k0], ierr)
!   call cuview_add_field(pub, 'T', T(1:nx, 1:ny, 1:nzl), ierr)  ! this rank's block, in place:
!                                                  ! the interior of real(8) :: T(0:nx+1, 0:ny+1, 0:nzl+1)
!   call cuview_start(pub, ierr)
!   do
!     call cuview_mpi_turn(pub, MPI_COMM_WORLD, 8_c_int64_t, .false., steps, ierr)  ! rank 0's steering, everywhere
!     if (cuview_shutdown_requested(pub)) exit
!     ... take `steps` steps, exchanging halos ...
!     call cuview_mpi_publish(pub, MPI_COMM_WORLD, step, t, ierr)
!   end do
module cuview_mpi
  use, intrinsic :: iso_c_binding
  use cuview, only: cuview_publisher, c_string, create_arguments
  implicit none
  private
  public :: cuview_mpi_create, cuview_mpi_turn, cuview_mpi_publish

  interface
    function c_mpi_create(comm, name, backend, device, sharing, options, ndim, global, offset, out) &
        bind(c, name='cuview_publisher_mpi_create_f')
      import :: c_int, c_char, c_ptr, c_int32_t, c_int64_t
      integer(c_int), value :: comm, device
      character(kind=c_char), intent(in) :: name(*), backend(*), sharing(*), options(*)
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: global(*), offset(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: c_mpi_create
    end function c_mpi_create
    function c_mpi_turn(pub, comm, wanted, stop, steps) bind(c, name='cuview_publisher_mpi_turn_f')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: pub
      integer(c_int), value :: comm, stop
      integer(c_int64_t), value :: wanted
      integer(c_int64_t), intent(out) :: steps
      integer(c_int) :: c_mpi_turn
    end function c_mpi_turn
    function c_mpi_publish(pub, comm, step, time, data, stream, published) bind(c, name='cuview_publisher_mpi_publish_f')
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: pub, data, stream
      integer(c_int), value :: comm
      integer(c_int64_t), value :: step
      real(c_double), value :: time
      integer(c_int), intent(out) :: published
      integer(c_int) :: c_mpi_publish
    end function c_mpi_publish
  end interface

contains

  !> cuview_create for this rank's part: the whole grid's shape and this rank's first cell in it
  !> (0-based), both fastest axis first, as many as the fields' dimensions.
  subroutine cuview_mpi_create(pub, comm, name, global_shape, offset, status, backend, device, sharing, options)
    type(cuview_publisher), intent(out) :: pub
    integer, intent(in) :: comm
    character(len=*), intent(in) :: name
    integer, intent(in) :: global_shape(:), offset(:)
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: backend, sharing, options
    integer, intent(in), optional :: device
    character(len=:), allocatable :: b, s, o
    integer(c_int64_t) :: g(3), f(3)
    integer :: n, i
    integer(c_int) :: d
    call create_arguments(b, s, o, d, backend, sharing, options, device)
    n = min(size(global_shape), 3)
    g = 0
    f = 0
    do i = 1, n
      g(i) = int(global_shape(n + 1 - i), c_int64_t)
      if (n + 1 - i <= size(offset)) f(i) = int(offset(n + 1 - i), c_int64_t)
    end do
    status = c_mpi_create(int(comm, c_int), c_string(name), c_string(b), d, c_string(s), c_string(o), &
                          int(n, c_int32_t), g, f, pub%handle)
  end subroutine cuview_mpi_create

  !> Once per batch, before stepping: how many of `wanted` steps every rank takes (0 while paused)
  !> and rank 0's steering on every rank (read with the cuview accessors). stop: rank 0's wish to end.
  subroutine cuview_mpi_turn(pub, comm, wanted, stop, steps, status)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in) :: wanted
    logical, intent(in) :: stop
    integer(c_int64_t), intent(out) :: steps
    integer, intent(out) :: status
    integer(c_int) :: s
    s = 0
    if (stop) s = 1
    status = c_mpi_turn(pub%handle, int(comm, c_int), wanted, s, steps)
  end subroutine cuview_mpi_turn

  !> After every turn: every rank publishes `step` when any viewer wants a frame and every rank's
  !> budget allows one.
  subroutine cuview_mpi_publish(pub, comm, step, time, status, published)
    type(cuview_publisher), intent(in) :: pub
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    integer, intent(out) :: status
    logical, intent(out), optional :: published
    integer(c_int) :: p
    status = c_mpi_publish(pub%handle, int(comm, c_int), step, time, c_null_ptr, c_null_ptr, p)
    if (present(published)) published = p /= 0
  end subroutine cuview_mpi_publish

end module cuview_mpi
