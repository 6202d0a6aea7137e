"""Productions received from other parties, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.incoming import views

urlpatterns = [
    path("incoming/", views.incoming_upload, name="incoming_upload"),
    path("incoming/<int:incoming_id>/", views.incoming_detail, name="incoming"),
]
