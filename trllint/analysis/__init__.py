"""Facts that rules ask for, computed once and shared: what a name refers to, where a node sits
(which class, which method, is it a training step), which accelerator is in scope.

A rule should read like its specification; the reasoning about code lives here.
"""
