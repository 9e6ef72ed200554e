/*
 * Running a program (the concord CLI, alone or under valgrind) as a child
 * process of a test, with its standard streams redirected to files.
 */
#ifndef CONCORD_CHILD_PROCESS_H
#define CONCORD_CHILD_PROCESS_H

/* Runs the program at path argv[0] with the NULL-terminated arguments argv,
 * stdin read from input_path (NULL: /dev/null), stdout written to out_path
 * and stderr to err_path (the same path as out_path: both into that one
 * file; NULL: the test's own stderr). After timeout_seconds (0: no limit)
 * the child is killed and the running cmocka test fails. Returns the exit
 * code, or 128 + the signal that ended the child; 126 when the child could
 * not open its files, 127 when argv[0] could not be executed. */
int run_program(const char *const *argv, const char *input_path, const char *out_path,
                const char *err_path, int timeout_seconds);

/* Starts the program as run_program does, without waiting for it, its
 * address space limited to `address_space_mb` megabytes (0: no limit):
 * returns its process id. */
int start_program(const char *const *argv, const char *input_path, const char *out_path,
                  const char *err_path, int address_space_mb);

/* Waits for a process from start_program, as run_program does. */
int wait_program(int pid, const char *name, int timeout_seconds);

#endif /* CONCORD_CHILD_PROCESS_H */
