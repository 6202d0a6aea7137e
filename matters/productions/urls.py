"""Outgoing productions, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.productions import views

urlpatterns = [
    path("productions/", views.productions, name="productions"),
    path("productions/<int:production_id>/serve/", views.production_serve_view, name="production_serve"),
    path("productions/<int:production_id>/<str:kind>/", views.production_download, name="production_download"),
]
