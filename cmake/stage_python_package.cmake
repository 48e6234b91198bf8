# Builds an importable kernelsmith package in the build tree: symbolic links to the pure-Python sources
# (edits show at once) and to the compiled binaries. Run with cmake -P after _core is built.
file(MAKE_DIRECTORY ${STAGE_DIR})
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.py ${SOURCE_DIR}/*.pyi ${SOURCE_DIR}/py.typed)
foreach(source IN LISTS sources)
  get_filename_component(dir ${STAGE_DIR}/${source} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  file(CREATE_LINK ${SOURCE_DIR}/${source} ${STAGE_DIR}/${source} SYMBOLIC)
endforeach()
foreach(binary IN LISTS BINARIES)
  get_filename_component(name ${binary} NAME)
  file(CREATE_LINK ${binary} ${STAGE_DIR}/${name} SYMBOLIC)
endforeach()
