# CMake package for dflow (find_package(dflow)), installed by tools/install.sh.
# Gives the imported target dflow::dflow: the shared library, its headers (C++17) and
# the system libraries its headers use (Abseil, protobuf).
include(CMakeFindDependencyMacro)
find_dependency(absl CONFIG)
find_dependency(Protobuf)

get_filename_component(_dflow_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET dflow::dflow)
  add_library(dflow::dflow SHARED IMPORTED)
  set_target_properties(dflow::dflow PROPERTIES
    IMPORTED_LOCATION "${_dflow_prefix}/lib/libdflow.so"
    IMPORTED_SONAME "libdflow.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_dflow_prefix}/include/dflow"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES
      "absl::status;absl::statusor;absl::strings;absl::str_format;absl::synchronization;absl::time;absl::hash;absl::raw_hash_set;absl::cord;protobuf::libprotobuf")
endif()

set(dflow_LIBRARIES dflow::dflow)
unset(_dflow_prefix)
