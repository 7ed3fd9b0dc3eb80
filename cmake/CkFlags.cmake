# Compiler flags for ckbatch's own code: C11, strict warnings as errors, optional sanitizers.
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)   # -std=c11: GCC then keeps FP contraction off by default
# ... and clang is told so: a kernel's portable and AVX-512 paths give the same bits only if no
# compiler fuses a multiply and an add on its own (kernels/ck_isa.h).
add_compile_options(-ffp-contract=off)

# Baseline x86-64: libckbatch must run on any x86-64 CPU. The kernels pick their AVX-512 paths at run
# time (kernels/ck_isa.h) and oneDNN its own. CK_NATIVE=ON builds for this machine only.
option(CK_NATIVE "Compile everything with -march=native (the binaries then need this CPU)" OFF)
set(CMAKE_C_FLAGS_RELEASE "-O3 -DNDEBUG")
set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O2 -g")
set(CMAKE_C_FLAGS_DEBUG "-O0 -g")
if(CK_NATIVE)
    add_compile_options(-march=native)
endif()

# Every room's objects also go into libckbatch.so: position-independent, and only what
# include/ckbatch.h marks CK_API is exported (CK_BUILDING_LIBRARY turns CK_API into
# visibility("default")); everything else stays inside the library.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_C_VISIBILITY_PRESET hidden)
add_compile_definitions(CK_BUILDING_LIBRARY)

if(CK_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
endif()

if(CK_FUZZ)
    # libFuzzer harnesses (tests/fuzz): every library gets coverage hooks + ASan + UBSan.
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
endif()

if(CK_TSAN)
    # ThreadSanitizer (clang): races in the scheduler and executor; see scripts/test.sh.
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
endif()

# ck_warnings(target): the warning set every ckbatch target compiles with.
function(ck_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -pedantic)
    target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
endfunction()
