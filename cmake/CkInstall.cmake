# CkInstall.cmake - `cmake --install build --prefix P` lays out ckbatch for other programs:
#
#   P/include/ckbatch.h                          the one public header
#   P/<libdir>/libckbatch.so.0.1.0 (.so.0, .so)  the shared library (SONAME libckbatch.so.0)
#   P/<libdir>/libckbatch.a                      every room in one archive, for static linking
#   P/bin/ckbatch                                the CLI, RPATH $ORIGIN/../<libdir>
#   P/bin/ckbatch-mpi                            the MPI front end (-DCK_MPI=ON only)
#   P/<libdir>/pkgconfig/ckbatch.pc              pkg-config (--static: the system libraries)
#   P/<libdir>/cmake/ckbatch/                    find_package(ckbatch CONFIG): ckbatch::ckbatch
#   P/<libdir>/ckbatch/codegen/                  what `ckbatch compile` builds from: include/ and
#                                                the kernel and scheduler archives
#
# <libdir> is GNUInstallDirs' CMAKE_INSTALL_LIBDIR, fixed at configure time ("lib", or
# lib/x86_64-linux-gnu on Debian when configured with CMAKE_INSTALL_PREFIX=/usr); every file above
# uses that one value. The prefix is the install-time one (--prefix wins over the configured
# CMAKE_INSTALL_PREFIX): the CMake package finds itself relative to its own folder, and ckbatch.pc
# is written at install time. Included from the top CMakeLists.txt after engine/ has made the
# targets.
include(CMakePackageConfigHelpers)

set(CK_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ckbatch)

# ---- header, libraries, CLI ----

install(FILES ${PROJECT_SOURCE_DIR}/include/ckbatch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Exported as ckbatch::ckbatch. Its dependencies are PRIVATE (the .so carries its NEEDED entries),
# so the exported target names none of them and a consumer finds no oneDNN, cJSON, ... itself.
set_target_properties(ckbatch_shared PROPERTIES EXPORT_NAME ckbatch)
install(TARGETS ckbatch_shared EXPORT ckbatchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
get_target_property(ck_static_lib ckbatch_static CK_FILE)
install(FILES ${ck_static_lib} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ckbatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(CK_MPI)
    install(TARGETS ckbatch-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# the misaki lexicons the text front end reads (engine/corpus/g2p/misaki/en_lexicon.c), with their notice
install(FILES ${PROJECT_SOURCE_DIR}/data/misaki/us_gold.json ${PROJECT_SOURCE_DIR}/data/misaki/us_silver.json
              ${PROJECT_SOURCE_DIR}/data/misaki/gb_gold.json ${PROJECT_SOURCE_DIR}/data/misaki/gb_silver.json
              ${PROJECT_SOURCE_DIR}/data/misaki/NOTICE ${PROJECT_SOURCE_DIR}/data/misaki/MANIFEST
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ckbatch/misaki)
# the shipped voice packs (engine/weights/voice.c), with their notice and checksums
file(GLOB CK_VOICE_PACKS ${PROJECT_SOURCE_DIR}/data/voices/*.bin)
install(FILES ${CK_VOICE_PACKS} ${PROJECT_SOURCE_DIR}/data/voices/NOTICE
              ${PROJECT_SOURCE_DIR}/data/voices/SHA256SUMS
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ckbatch/voices)

# the codegen kit `ckbatch compile` builds a generated library from (engine/codegen/kit.c): the
# headers the generated C includes and the kernel and scheduler archives it links, beside the
# shared library so a moved prefix keeps its own
set(CK_KIT_DIR ${CMAKE_INSTALL_LIBDIR}/ckbatch/codegen)
file(GLOB ck_kit_headers ${PROJECT_SOURCE_DIR}/kernels/*.h ${PROJECT_SOURCE_DIR}/scheduler/*.h)
install(FILES ${ck_kit_headers} ${PROJECT_SOURCE_DIR}/engine/graph/compiled_abi.h
              ${PROJECT_SOURCE_DIR}/include/ckbatch.h
        DESTINATION ${CK_KIT_DIR}/include)
install(FILES $<TARGET_FILE:ck_kernels> $<TARGET_FILE:ck_scheduler> DESTINATION ${CK_KIT_DIR})

# ---- CMake package: ckbatchConfig.cmake, ckbatchConfigVersion.cmake, ckbatchTargets*.cmake ----

install(EXPORT ckbatchTargets NAMESPACE ckbatch:: DESTINATION ${CK_PACKAGE_DIR})
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/ckbatchConfig.cmake
"# ckbatchConfig.cmake - find_package(ckbatch CONFIG) gives the imported target ckbatch::ckbatch:
# libckbatch.so with the include folder of ckbatch.h. Needs no other package (the shared library
# links its dependencies itself).
include(\"\${CMAKE_CURRENT_LIST_DIR}/ckbatchTargets.cmake\")
")
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ckbatchConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ckbatchConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/ckbatchConfigVersion.cmake
        DESTINATION ${CK_PACKAGE_DIR})

# ---- pkg-config: ckbatch.pc ----

# What a static link of libckbatch.a needs besides it, in link order. Packages with a .pc file go
# in Requires.private; oneDNN (Debian ships no dnnl.pc), the OpenMP runtime of the compiler that
# built the archive (libgomp with GCC), libm and pthreads go in Libs.private.
set(CK_PC_REQUIRES_PRIVATE "libcjson libcrypto")
if(CK_ESPEAK)
    string(APPEND CK_PC_REQUIRES_PRIVATE " espeak-ng")
endif()
set(CK_PC_LIBS_PRIVATE "-ldnnl")
foreach(lib ${OpenMP_C_LIB_NAMES})   # gomp;pthread with GCC
    if(NOT lib MATCHES "^(m|pthread)$")
        string(APPEND CK_PC_LIBS_PRIVATE " -l${lib}")
    endif()
endforeach()
string(APPEND CK_PC_LIBS_PRIVATE " -lm -lpthread")

# The template gets everything but the prefix now; the install step fills in the prefix it installs
# to (CMAKE_INSTALL_PREFIX inside an install script is --prefix when given).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(CK_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(CK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/ckbatch.pc.in
"prefix=@CK_PC_PREFIX@
exec_prefix=\${prefix}
libdir=${CK_PC_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: ckbatch
Description: Batch inference engine for the Kokoro-82M phoneme encoder (C11)
Version: ${PROJECT_VERSION}
Requires.private: ${CK_PC_REQUIRES_PRIVATE}
Cflags: -I\${includedir}
Libs: -L\${libdir} -lckbatch
Libs.private: ${CK_PC_LIBS_PRIVATE}
")
install(CODE "
    set(CK_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/ckbatch.pc.in\"
                   \"${CMAKE_CURRENT_BINARY_DIR}/ckbatch.pc\" @ONLY)
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ckbatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
