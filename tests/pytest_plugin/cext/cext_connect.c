/* A C extension that connects a Python socket.socket from C, as native code
 * built on Python's socket module does: the guard must see it too. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *connect_to(PyObject *self, PyObject *args) {
    const char *host;
    int port;
    if (!PyArg_ParseTuple(args, "si", &host, &port))
        return NULL;
    PyObject *socket_module = PyImport_ImportModule("socket");
    if (socket_module == NULL)
        return NULL;
    PyObject *sock = PyObject_CallMethod(socket_module, "socket", NULL);
    Py_DECREF(socket_module);
    if (sock == NULL)
        return NULL;
    PyObject *result = PyObject_CallMethod(sock, "connect", "((si))", host, port);
    PyObject *closed = PyObject_CallMethod(sock, "close", NULL);
    Py_XDECREF(closed);
    Py_DECREF(sock);
    return result; /* NULL, with the exception set, when the connect was refused */
}

static PyMethodDef methods[] = {
    {"connect_to", connect_to, METH_VARARGS, "Connect a socket.socket to (host, port) from C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cext_connect", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cext_connect(void) { return PyModule_Create(&module); }
