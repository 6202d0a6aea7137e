"""A matter's drafts, their versions, review, findings and exports, below ``matters/<matter_id>/`` (see
:mod:`matters.urls`)."""

from django.urls import path

from matters.drafts import toa_views, views

urlpatterns = [
    path("drafts/", views.draft_list, name="drafts"),
    path("drafts/<int:draft_id>/", views.draft_review, name="draft"),
    path("drafts/<int:draft_id>/rename/", views.draft_rename_view, name="draft_rename"),
    path("drafts/<int:draft_id>/versions/", views.draft_versions, name="draft_versions"),
    path("drafts/<int:draft_id>/v<int:number>/", views.draft_review, name="draft_version"),
    path("drafts/<int:draft_id>/v<int:number>/items/<str:key>/", views.review_item, name="review_item"),
    path("drafts/<int:draft_id>/v<int:number>/findings/<int:finding_id>/<str:action>/", views.finding_resolve,
         name="finding_resolve"),
    path("drafts/<int:draft_id>/v<int:number>/edit/", views.draft_edit, name="draft_edit"),
    path("drafts/<int:draft_id>/v<int:number>/word/", views.draft_word_upload, name="draft_word_upload"),
    path("drafts/<int:draft_id>/v<int:number>/approve/", views.draft_approve_view, name="draft_approve"),
    path("drafts/<int:draft_id>/v<int:number>/export/<str:kind>/", views.draft_export_view, name="draft_export"),
    path("drafts/<int:draft_id>/v<int:number>/authorities/", toa_views.draft_authorities, name="draft_authorities"),
]
