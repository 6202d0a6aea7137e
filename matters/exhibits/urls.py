"""A matter's exhibits and their pages, below ``matters/<matter_id>/`` (see :mod:`matters.urls`)."""

from django.urls import path

from matters.exhibits import views

urlpatterns = [
    path("upload/", views.exhibit_upload, name="upload"),
    path("exhibits/rows/", views.exhibit_rows, name="exhibit_rows"),
    path("exhibits/<int:exhibit_id>/", views.exhibit_detail, name="exhibit"),
    path("exhibits/<int:exhibit_id>/edit/", views.exhibit_edit, name="exhibit_edit"),
    path("exhibits/<int:exhibit_id>/cites-as/", views.exhibit_cites_as, name="exhibit_cites_as"),
    path("exhibits/<int:exhibit_id>/password/", views.exhibit_password, name="exhibit_password"),
    path("exhibits/<int:exhibit_id>/original/", views.exhibit_original, name="exhibit_original"),
    path("exhibits/<int:exhibit_id>/reprocess/", views.exhibit_reprocess_view, name="exhibit_reprocess"),
    path("exhibits/<int:exhibit_id>/generated-override/", views.exhibit_override_generated_view,
         name="exhibit_override_generated"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/", views.page_view, name="page"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/clear-injection/", views.page_clear_injection_view,
         name="page_clear_injection"),
    path("exhibits/<int:exhibit_id>/pages/<int:number>/<str:size>.jpg", views.page_image, name="page_image"),
]
