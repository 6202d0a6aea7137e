"""Privilege logs and redactions, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.privilege import views

urlpatterns = [
    path("productions/<int:production_id>/privilege-log/", views.privilege_log_view, name="privilege_log"),
    path("productions/<int:production_id>/privilege-log.<str:kind>", views.privilege_log_download,
         name="privilege_log_download"),
    path("exhibits/<int:exhibit_id>/redact-search/", views.redact_search_view, name="redact_search"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/redactions/", views.redaction_add_view, name="redaction_add"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/redactions/<int:redaction_id>/delete/",
         views.redaction_delete_view, name="redaction_delete"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/improper/redact/", views.improper_redact_view,
         name="improper_redact"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/improper/confirm/", views.improper_confirm_view,
         name="improper_confirm"),
]
