"""A matter's deadlines, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.deadlines import views

urlpatterns = [
    path("deadlines/", views.deadline_new_view, name="deadline_new"),
    path("deadlines/<int:deadline_id>/delete/", views.deadline_delete_view, name="deadline_delete"),
]
