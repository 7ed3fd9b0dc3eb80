# Finds ckbatch's Debian-packaged dependencies (scripts/bootstrap.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS C)
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)
find_package(dnnl CONFIG REQUIRED)                       # libdnnl-dev (oneDNN 2.x)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)  # libcjson-dev
if(CK_ESPEAK)
    pkg_check_modules(ESPEAK REQUIRED IMPORTED_TARGET espeak-ng)  # libespeak-ng-dev
endif()
if(CK_TESTS)
    pkg_check_modules(CUNIT REQUIRED IMPORTED_TARGET cunit)  # libcunit1-dev
endif()
