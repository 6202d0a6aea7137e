"""A matter's legal hold and purge, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.retention import views

urlpatterns = [
    path("hold/", views.matter_hold_view, name="hold"),
    path("purge/", views.matter_purge_view, name="purge"),
]
