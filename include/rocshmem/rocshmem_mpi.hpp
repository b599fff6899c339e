/**
 * @file rocshmem_mpi.hpp
 * The MPI types of the API (upstream's header of the same name). rocshmem.hpp includes it.
 *
 * The overloads that take an MPI_Comm (rocshmem_init(MPI_Comm), rocshmem_init_thread(..., MPI_Comm))
 * link by Open MPI's type, `struct ompi_communicator_t *`, as upstream's do when it is built
 * without an external MPI: so a program links the same whichever MPI header it saw. If an
 * <mpi.h> is on the include path it is used (Open MPI's declares the same types); otherwise
 * Open MPI's handle types are declared here. MPI itself is loaded at run time by the library.
 *
 * Not declared here (unlike upstream's header): the predefined handles (MPI_COMM_WORLD, MPI_INT,
 * ...) and constants; a program that names them includes <mpi.h>.
 */
#ifndef ROCSHMEM_MPI_HPP
#define ROCSHMEM_MPI_HPP

#if !defined(MPI_VERSION) && defined(__has_include)
#if __has_include(<mpi.h>)
#include <mpi.h>
#endif
#endif

#if !defined(MPI_VERSION)
typedef struct ompi_communicator_t *MPI_Comm;
typedef struct ompi_win_t *MPI_Win;
typedef struct ompi_group_t *MPI_Group;
typedef struct ompi_op_t *MPI_Op;
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_request_t *MPI_Request;
typedef struct ompi_info_t *MPI_Info;
#endif

#endif  // ROCSHMEM_MPI_HPP
