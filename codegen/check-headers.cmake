# check-headers.cmake - fail clearly when the headers of a CUDA version are
# missing. cmake -DINC=<dir> -DVER=<X.Y> -DFETCH=<script> -DDEST=<dir> [-DNVML=<dir>] [-DNEEDS=<h,h...>]
#   -P check-headers.cmake
# NEEDS: headers of the tree's other libraries expected beside cuda.h (a header folder fetched before they were
# pinned lacks them).
if(NOT EXISTS "${INC}/cuda.h")
  if(VER STREQUAL "13.0")
    message(FATAL_ERROR "CUDA ${VER} headers not found: ${INC}/cuda.h is missing (set CUSHIM_CUDA_INCLUDE)")
  else()
    message(FATAL_ERROR "CUDA ${VER} headers not found: ${INC}/cuda.h is missing.\n"
                        "Run: ${FETCH} ${DEST}   (or set CUSHIM_EXTRA_HEADERS_DIR)")
  endif()
endif()
if(NVML AND NOT EXISTS "${NVML}/nvml.h")
  message(FATAL_ERROR "NVML headers not found: ${NVML}/nvml.h is missing.\n"
                      "Run: ${FETCH} ${DEST}   (or set CUSHIM_EXTRA_HEADERS_DIR)")
endif()
string(REPLACE "," ";" _needs "${NEEDS}")
foreach(_h IN LISTS _needs)
  if(NOT EXISTS "${INC}/${_h}")
    message(FATAL_ERROR "CUDA ${VER}'s ${_h} not found in ${INC}.\n"
                        "Run: ${FETCH} ${DEST}   (or set CUSHIM_EXTRA_HEADERS_DIR)")
  endif()
endforeach()
