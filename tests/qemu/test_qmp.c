/* The QMP client against a fake QMP server (a forked child on a unix
 * socket): greeting and capabilities, replies matched by id, async events
 * skipped, error replies, timeouts, late replies, a closed connection, a
 * server that is not QMP, and a socket that never appears. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qemu/launcher/qmp.h"
#include "tests/check.h"

static char directory[64];
static char socket_path[100];

static int listen_at(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path)
        exit(2);
    memcpy(address.sun_path, path, strlen(path) + 1);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(fd, 1) != 0) {
        perror("fake server");
        exit(2);
    }
    return fd;
}

/* ---- the fake server (child side; exits 0 when the client behaved) ---- */

static int server_failures;

static void server_expect(bool condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "fake server: expected %s\n", what);
        server_failures++;
    }
}

static bool server_read_line(int fd, char *line, size_t capacity)
{
    size_t n = 0;
    while (n + 1 < capacity) {
        char c;
        if (read(fd, &c, 1) != 1)
            return false;
        if (c == '\n')
            break;
        line[n++] = c;
    }
    line[n] = '\0';
    return true;
}

static void server_send(int fd, const char *text)
{
    size_t length = strlen(text);
    if (write(fd, text, length) != (ssize_t)length)
        server_failures++;
}

/* Reads the next command, checks its name, returns its id. */
static unsigned long server_command(int fd, const char *name)
{
    char line[1024];
    char wanted[128];
    if (!server_read_line(fd, line, sizeof line)) {
        server_expect(false, name);
        return 0;
    }
    snprintf(wanted, sizeof wanted, "\"execute\":\"%s\"", name);
    server_expect(strstr(line, wanted) != NULL, name);
    const char *id = strstr(line, "\"id\":");
    server_expect(id != NULL, "an id");
    return id != NULL ? strtoul(id + 5, NULL, 10) : 0;
}

static void reply(int fd, const char *format, unsigned long id)
{
    char text[512];
    snprintf(text, sizeof text, format, id);
    server_send(fd, text);
}

static void serve_script(int listener)
{
    int fd = accept(listener, NULL, NULL);
    server_send(fd, "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, "
                    "\"major\": 7}}, \"capabilities\": [\"oob\"]}}\r\n");
    reply(fd, "{\"return\": {}, \"id\": %lu}\r\n", server_command(fd, "qmp_capabilities"));

    unsigned long id = server_command(fd, "stop");
    server_send(fd, "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, "
                    "\"event\": \"STOP\"}\r\n");
    reply(fd, "{\"return\": {}, \"id\": %lu}\r\n", id);

    char line[1024];
    server_expect(server_read_line(fd, line, sizeof line), "set_link");
    server_expect(strstr(line, "\"execute\":\"set_link\",\"arguments\":{\"name\":\"l0\","
                               "\"up\":false}") != NULL,
                  "set_link with its arguments");
    const char *at = strstr(line, "\"id\":");
    reply(fd, "{\"id\": %lu, \"return\": {}}\r\n", at ? strtoul(at + 5, NULL, 10) : 0);

    reply(fd, "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command "
              "bogus has not been found\"}, \"id\": %lu}\r\n",
          server_command(fd, "bogus"));

    id = server_command(fd, "query-status");
    server_send(fd, "{\"return\": {\"status\": \"stale\"}, \"id\": 9999}\r\n");
    server_send(fd, "{\"event\": \"NIC_RX_FILTER_CHANGED\", \"data\": {\"s\": "
                    "\"a}\\\"return\\\": 1\", \"n\": [1, {\"x\": 2}]}}\r\n");
    reply(fd, "{\"return\": {\"running\": true, \"status\": \"running\"}, \"id\": %lu}\r\n",
          id);

    unsigned long hang = server_command(fd, "hang"); /* no answer in time */
    id = server_command(fd, "cont");
    reply(fd, "{\"return\": {\"late\": 1}, \"id\": %lu}\r\n", hang);
    reply(fd, "{\"return\": {}, \"id\": %lu}\r\n", id);

    /* Replies split across writes still make one line. */
    id = server_command(fd, "system_reset");
    server_send(fd, "{\"retu");
    usleep(20000);
    reply(fd, "rn\": {}, \"id\": %lu}\r\n", id);

    reply(fd, "{\"return\": {}, \"id\": %lu}\r\n", server_command(fd, "quit"));
    close(fd);
}

static void serve_not_qmp(int listener)
{
    int fd = accept(listener, NULL, NULL);
    server_send(fd, "SSH-2.0-OpenSSH\r\n");
    close(fd);
}

static pid_t start_server(void (*script)(int))
{
    int listener = listen_at(socket_path);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20); /* never outlive a broken test */
        script(listener);
        _exit(server_failures == 0 ? 0 : 1);
    }
    close(listener);
    return pid;
}

static bool server_passed(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_conversation(void)
{
    pid_t server = start_server(serve_script);
    struct qmp_client client;
    qmp_init(&client);
    char reply_text[256];
    CHECK(qmp_connect(&client, socket_path, 5000, reply_text, sizeof reply_text) == QMP_OK);

    CHECK(qmp_execute(&client, "stop", NULL, 5000, reply_text, sizeof reply_text) == QMP_OK);
    CHECK(strcmp(reply_text, "{}") == 0);
    CHECK(client.events_skipped == 1 && strcmp(client.last_event, "STOP") == 0);

    CHECK(qmp_execute(&client, "set_link", "{\"name\":\"l0\",\"up\":false}", 5000,
                      reply_text, sizeof reply_text) == QMP_OK);

    CHECK(qmp_execute(&client, "bogus", NULL, 5000, reply_text, sizeof reply_text) ==
          QMP_COMMAND_ERROR);
    CHECK(strcmp(reply_text, "The command bogus has not been found") == 0);

    CHECK(qmp_execute(&client, "query-status", NULL, 5000, reply_text,
                      sizeof reply_text) == QMP_OK);
    CHECK(strcmp(reply_text, "{\"running\": true, \"status\": \"running\"}") == 0);
    CHECK(client.events_skipped == 2 &&
          strcmp(client.last_event, "NIC_RX_FILTER_CHANGED") == 0);

    CHECK(qmp_execute(&client, "hang", NULL, 200, reply_text, sizeof reply_text) ==
          QMP_TIMEOUT);
    /* The late answer to "hang" must not be taken for cont's. */
    CHECK(qmp_execute(&client, "cont", NULL, 5000, reply_text, sizeof reply_text) == QMP_OK);
    CHECK(strcmp(reply_text, "{}") == 0);

    CHECK(qmp_execute(&client, "system_reset", NULL, 5000, reply_text,
                      sizeof reply_text) == QMP_OK);
    CHECK(qmp_execute(&client, "quit", NULL, 5000, reply_text, sizeof reply_text) == QMP_OK);
    CHECK(qmp_execute(&client, "stop", NULL, 2000, reply_text, sizeof reply_text) ==
          QMP_CLOSED);
    qmp_close(&client);
    CHECK(qmp_execute(&client, "stop", NULL, 100, reply_text, sizeof reply_text) ==
          QMP_CLOSED);
    CHECK(server_passed(server));
}

static void test_not_qmp(void)
{
    pid_t server = start_server(serve_not_qmp);
    struct qmp_client client;
    qmp_init(&client);
    char detail[128];
    CHECK(qmp_connect(&client, socket_path, 5000, detail, sizeof detail) == QMP_PROTOCOL);
    CHECK_CONTAINS(detail, "greeting");
    CHECK(client.fd < 0);
    CHECK(server_passed(server));
}

static void test_no_socket(void)
{
    struct qmp_client client;
    qmp_init(&client);
    char detail[128];
    char path[200];
    snprintf(path, sizeof path, "%s/never-created.qmp", directory);
    CHECK(qmp_connect(&client, path, 100, detail, sizeof detail) == QMP_TIMEOUT);
    CHECK(qmp_connect(&client, "/tmp/this/path/is/far/too/long/for/a/unix/socket/"
                               "address/because/those/hold/only/one/hundred/and/seven/"
                               "bytes.qmp",
                      100, detail, sizeof detail) == QMP_SYSTEM);
    CHECK_CONTAINS(detail, "too long");
    CHECK(strcmp(qmp_status_text(QMP_TIMEOUT), "timed out") == 0);
}

static void test_json_member(void)
{
    const char *text = "{\"a\": \"x,}\\\"y\", \"b\": {\"c\": [1, {\"d\": 2}]}, \"id\": 17}";
    const char *value;
    size_t length;
    CHECK(qmp_json_member(text, strlen(text), "id", &value, &length));
    CHECK(length == 2 && memcmp(value, "17", 2) == 0);
    CHECK(qmp_json_member(text, strlen(text), "b", &value, &length));
    CHECK(length == strlen("{\"c\": [1, {\"d\": 2}]}"));
    CHECK(!qmp_json_member(text, strlen(text), "c", &value, &length)); /* nested */
    CHECK(!qmp_json_member(text, strlen(text), "d", &value, &length));
    CHECK(!qmp_json_member("[1]", 3, "a", &value, &length));
    CHECK(!qmp_json_member("{\"a\": 1", 7, "a", &value, &length)); /* unterminated */
    CHECK(!qmp_json_member("{\"a\" 1}", 7, "a", &value, &length));
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(directory, sizeof directory, "/tmp/tori-qmp-test-XXXXXX");
    if (mkdtemp(directory) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(socket_path, sizeof socket_path, "%s/fake.qmp", directory);
    test_json_member();
    test_conversation();
    test_not_qmp();
    test_no_socket();
    unlink(socket_path);
    rmdir(directory);
    return check_report("emu.qmp");
}
