from django.urls import path

from . import views, views_digests, views_jobs

app_name = "pipeline"

urlpatterns = [
    path("topology/", views.topology, name="topology"),
    path("topology/probe/", views.topology_probe, name="topology_probe"),
    path("topology/discover/", views.topology_discover, name="topology_discover"),
    path("matters/<int:matter_id>/jobs/", views_jobs.job_list, name="jobs"),
    path("matters/<int:matter_id>/digests/", views_digests.matter_digests_view, name="digests"),
    path("matters/<int:matter_id>/digests/request/", views_digests.matter_digests_request_view,
         name="digests_request"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/digest/", views_digests.exhibit_digest_view,
         name="exhibit_digest"),
    path("matters/<int:matter_id>/exhibits/<int:exhibit_id>/digest/request/",
         views_digests.exhibit_digest_request_view, name="exhibit_digest_request"),
    path("jobs/<int:job_id>/", views_jobs.job_detail, name="job"),
    path("jobs/<int:job_id>/cancel/", views_jobs.job_cancel_view, name="job_cancel"),
    path("jobs/<int:job_id>/retry/", views_jobs.stage_retry_view, name="stage_retry"),
    path("jobs/<int:job_id>/continue/", views_jobs.job_continue_view, name="job_continue"),
    path("jobs/<int:job_id>/skip/", views_jobs.stage_skip_view, name="stage_skip"),
    path("jobs/<int:job_id>/front/", views_jobs.job_front_view, name="job_front"),
]
