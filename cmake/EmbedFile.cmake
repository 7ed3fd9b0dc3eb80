# EmbedFile.cmake - script mode: writes OUT (a .c file) holding the bytes of IN as
# `const unsigned char NAME[]` plus `const size_t NAME_len`, so the binary carries its default
# circuit and runs without the source tree. Usage: cmake -DIN=.. -DOUT=.. -DNAME=.. -P EmbedFile.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR n "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
       bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN} by cmake/EmbedFile.cmake; do not edit. */\n"
     "#include <stddef.h>\n"
     "const unsigned char ${NAME}[] = {\n    ${bytes}0x00};\n"
     "const size_t ${NAME}_len = ${n};\n")
