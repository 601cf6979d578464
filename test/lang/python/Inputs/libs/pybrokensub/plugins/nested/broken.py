# Never imported by the package itself: loaded because every file under plugins/ is.
value = 1
this line is not python
