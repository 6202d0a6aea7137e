"""A matter's audit log, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.audit import views

urlpatterns = [
    path("audit/", views.matter_audit, name="audit"),
]
