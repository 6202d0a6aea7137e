"""The case file's URLs. Every page of a matter starts with ``matters/<matter_id>/``; each capability lists its
own paths after that prefix in its ``urls.py``. Names stay in the ``matters`` namespace (``matters:exhibit``)."""

from django.urls import include, path

from matters import views

app_name = "matters"

matter_patterns = [
    path("", views.matter_detail, name="detail"),
    path("members/<str:action>/", views.matter_member_view, name="member"),
    path("", include("matters.exhibits.urls")),
    # before productions, whose download path's <str:kind>/ would take privilege-log/ too
    path("", include("matters.privilege.urls")),
    path("", include("matters.productions.urls")),
    path("", include("matters.incoming.urls")),
    path("", include("matters.audit.urls")),
    path("", include("matters.retention.urls")),
    path("", include("matters.drafts.urls")),
    path("", include("matters.deadlines.urls")),
    path("", include("matters.chronology.urls")),
]

urlpatterns = [
    path("", views.matter_list, name="list"),
    path("matters/new/", views.matter_new, name="new"),
    path("matters/<int:matter_id>/", include(matter_patterns)),
]
