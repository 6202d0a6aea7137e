from django.urls import path

from . import views, views_audit, views_drafts, views_privilege, views_productions, views_retention

app_name = "matters"

urlpatterns = [
    path("", views.matter_list, name="list"),
    path("matters/new/", views.matter_new, name="new"),
    path("matters/<int:matter_id>/", views.matter_detail, name="detail"),
    path("matters/<int:matter_id>/upload/", views.exhibit_upload, name="upload"),
    path("matters/<int:matter_id>/exhibits/rows/", views.exhibit_rows, name="exhibit_rows"),
    path("matters/<int:matter_id>/productions/", views_productions.productions, name="productions"),
    path("matters/<int:matter_id>/productions/<int:production_id>/serve/", views_productions.production_serve_view,
         name="production_serve"),
    path("matters/<int:matter_id>/incoming/", views_productions.incoming_upload, name="incoming_upload"),
    path("matters/<int:matter_id>/incoming/<int:incoming_id>/", views_productions.incoming_detail, name="incoming"),
    # before the download path, whose <str:kind>/ would take privilege-log/ too
    path("matters/<int:matter_id>/productions/<int:production_id>/privilege-log/",
         views_privilege.privilege_log_view, name="privilege_log"),
    path("matters/<int:matter_id>/productions/<int:production_id>/privilege-log.<str:kind>",
         views_privilege.privilege_log_download, name="privilege_log_download"),
    path(
        "matters/<int:matter_id>/productions/<int:production_id>/<str:kind>/",
        views_productions.production_download,
        name="production_download",
    ),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/redact-search/", views_privilege.redact_search_view,
         name="redact_search"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/redactions/",
         views_privilege.redaction_add_view, name="redaction_add"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/redactions/<int:redaction_id>/delete/",
         views_privilege.redaction_delete_view, name="redaction_delete"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/improper/redact/",
         views_privilege.improper_redact_view, name="improper_redact"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/improper/confirm/",
         views_privilege.improper_confirm_view, name="improper_confirm"),
    path("matters/<int:matter_id>/audit/", views_audit.matter_audit, name="audit"),
    path("matters/<int:matter_id>/hold/", views_retention.matter_hold_view, name="hold"),
    path("matters/<int:matter_id>/purge/", views_retention.matter_purge_view, name="purge"),
    path("matters/<int:matter_id>/drafts/", views_drafts.draft_list, name="drafts"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/", views_drafts.draft_review, name="draft"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/rename/", views_drafts.draft_rename_view,
         name="draft_rename"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/versions/", views_drafts.draft_versions,
         name="draft_versions"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/", views_drafts.draft_review,
         name="draft_version"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/items/<str:key>/", views_drafts.review_item,
         name="review_item"),
    path(
        "matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/findings/<int:finding_id>/<str:action>/",
        views_drafts.finding_resolve,
        name="finding_resolve",
    ),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/edit/", views_drafts.draft_edit,
         name="draft_edit"),
    path("matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/approve/", views_drafts.draft_approve_view,
         name="draft_approve"),
    path(
        "matters/<int:matter_id>/drafts/<int:draft_id>/v<int:number>/export/<str:kind>/",
        views_drafts.draft_export_view,
        name="draft_export",
    ),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/", views.exhibit_detail, name="exhibit"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/edit/", views.exhibit_edit, name="exhibit_edit"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/cites-as/", views.exhibit_cites_as, name="exhibit_cites_as"),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/password/", views.exhibit_password, name="exhibit_password"
    ),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/original/", views.exhibit_original, name="exhibit_original"
    ),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/reprocess/",
        views.exhibit_reprocess_view,
        name="exhibit_reprocess",
    ),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/generated-override/",
        views.exhibit_override_generated_view,
        name="exhibit_override_generated",
    ),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/", views.page_view, name="page"),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/clear-injection/",
        views.page_clear_injection_view,
        name="page_clear_injection",
    ),
    path(
        "matters/<int:matter_id>/exhibits/<int:exhibit_id>/pages/<int:number>/<str:size>.jpg",
        views.page_image,
        name="page_image",
    ),
]
