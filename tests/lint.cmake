# Formatting is part of the test suite, so CI (which runs only the README's test command)
# checks it: every tracked C/C++/CUDA source must match .clang-format.
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
    add_test(NAME lint_clang_format
             COMMAND bash -c "git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.c' '*.h' | xargs ${CLANG_FORMAT} --dry-run -Werror"
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(lint_clang_format PROPERTIES LABELS lint)
else()
    message(WARNING "clang-format not found: the lint_clang_format test is not registered")
endif()
