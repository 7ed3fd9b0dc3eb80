# MergeArchives.cmake - cmake -DAR=ar -DOUT=libx.a -DIN=a.a|b.a -P MergeArchives.cmake
# Writes one static archive holding every member of the IN archives (ar's MRI script mode).
string(REPLACE "|" ";" libs "${IN}")
set(script "CREATE ${OUT}\n")
foreach(lib ${libs})
    string(APPEND script "ADDLIB ${lib}\n")
endforeach()
string(APPEND script "SAVE\nEND\n")
file(WRITE ${OUT}.mri "${script}")
file(REMOVE ${OUT})
execute_process(COMMAND ${AR} -M INPUT_FILE ${OUT}.mri RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ar -M failed (${rc}) writing ${OUT}")
endif()
