"""The chronology's page, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.chronology import views

urlpatterns = [
    path("chronology/", views.chronology, name="chronology"),
]
