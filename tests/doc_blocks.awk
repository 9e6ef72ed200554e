# Cuts the ```c blocks of a Markdown page into files that test_doc_blocks.c
# includes. Block N (from 1) gives two files in DIR: NAME_N_global.c, its
# lines that belong at file scope (preprocessor lines, and definitions
# that start with "static" or "int main(", up to the line that closes
# them), and NAME_N_body.c, its other lines (statements, which the test
# runs inside a function). NAME_count.h defines NAME_BLOCKS, the number of
# blocks. #line directives make the compiler's messages name the page.
# usage (from the top of the repository):
#   awk -v dir=DIR -v name=NAME -f tests/doc_blocks.awk PAGE.md
function emit(file) {
    if (next_line[file] != FNR) printf "#line %d \"%s\"\n", FNR, FILENAME > file
    print > file
    next_line[file] = FNR + 1
}
/^```c$/ {
    inside = 1
    global = 0
    depth = 0
    ++blocks
    global_file = dir "/" name "_" blocks "_global.c"
    body_file = dir "/" name "_" blocks "_body.c"
    printf "" > global_file
    printf "" > body_file
    next
}
inside && /^```$/ {
    inside = 0
    close(global_file)
    close(body_file)
    next
}
inside && /^$/ {
    next
}
inside && /^#/ {
    emit(global_file)
    next
}
inside {
    if (/^static / || /^int main\(/) global = 1
    if (!global) {
        emit(body_file)
        next
    }
    emit(global_file)
    depth += gsub(/[{]/, "{") - gsub(/[}]/, "}")
    if (depth == 0 && /[;}]/) global = 0
}
END {
    printf "#define %s_BLOCKS %d\n", toupper(name), blocks > (dir "/" name "_count.h")
}
